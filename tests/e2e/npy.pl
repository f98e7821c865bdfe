#!/usr/bin/perl
# npy.pl - an independent .npy reader and writer for the end-to-end tests: it shares no code
# with neuronop, so outputs checked with it are checked against a second implementation.
#
#   npy.pl write FILE DESCR SHAPE V...   write values; DESCR <f4 <f2 <V2 (bf16) <i4 |i1 <i8
#                                        <i2 |u1; SHAPE like 2x3 (or "scalar")
#   npy.pl write-fortran FILE DESCR SHAPE V...   the same values, stored in Fortran order
#   npy.pl read FILE                     print "DESCR SHAPE" then one value per line (C order)
#   npy.pl header FILE DICT              write a file with a raw header dict and no data
use strict;
use warnings;

my %size = ('<f4' => 4, '<f2' => 2, '<V2' => 2, '<i4' => 4, '|i1' => 1, '<i8' => 8,
            '<i2' => 2, '|u1' => 1);

sub f32_bits { unpack('L<', pack('f<', $_[0])) }
sub bits_f32 { unpack('f<', pack('L<', $_[0])) }

sub to_bf16 {    # round to nearest even
    my $u = f32_bits($_[0]);
    return ($u >> 16) | 0x40 if ($u & 0x7fffffff) > 0x7f800000;
    return (($u + 0x7fff + (($u >> 16) & 1)) >> 16) & 0xffff;
}

sub to_f16 {     # exact for the normal numbers the tests use
    my $v = shift;
    return 0 if $v == 0;
    my $s = $v < 0 ? 0x8000 : 0;
    $v = abs $v;
    my $e = 0;
    while ($v >= 2) { $v /= 2; $e++ }
    while ($v < 1) { $v *= 2; $e-- }
    return $s | (($e + 15) << 10) | int(($v - 1) * 1024 + 0.5);
}

sub from_f16 {
    my $h = shift;
    my ($s, $e, $m) = ($h >> 15, ($h >> 10) & 31, $h & 1023);
    my $v = $e == 0 ? $m / 1024 * 2**-14 : (1 + $m / 1024) * 2**($e - 15);
    return $s ? -$v : $v;
}

sub encode {
    my ($descr, $v) = @_;
    return pack('f<', $v) if $descr eq '<f4';
    return pack('S<', to_f16($v)) if $descr eq '<f2';
    return pack('S<', to_bf16($v)) if $descr eq '<V2';
    return pack('l<', $v) if $descr eq '<i4';
    return pack('c', $v) if $descr eq '|i1';
    return pack('q<', $v) if $descr eq '<i8';
    return pack('s<', $v) if $descr eq '<i2';
    return pack('C', $v) if $descr eq '|u1';
    die "unknown descr $descr\n";
}

sub decode {
    my ($descr, $b) = @_;
    return unpack('f<', $b) if $descr eq '<f4';
    return from_f16(unpack('S<', $b)) if $descr eq '<f2';
    return bits_f32(unpack('S<', $b) << 16) if $descr eq '<V2';
    return unpack('l<', $b) if $descr eq '<i4';
    return unpack('c', $b) if $descr eq '|i1';
    return unpack('q<', $b) if $descr eq '<i8';
    return unpack('s<', $b) if $descr eq '<i2';
    return unpack('C', $b) if $descr eq '|u1';
    die "unknown descr $descr\n";
}

sub write_file {
    my ($file, $dict, $data) = @_;
    my $hdr = $dict;
    $hdr .= ' ' while (10 + length($hdr) + 1) % 64;
    $hdr .= "\n";
    open my $f, '>:raw', $file or die "$file: $!\n";
    print $f "\x93NUMPY\x01\x00", pack('S<', length $hdr), $hdr, $data;
    close $f;
}

my $cmd = shift // die "usage: npy.pl write|write-fortran|read|header ...\n";
if ($cmd eq 'write' || $cmd eq 'write-fortran') {
    my ($file, $descr, $shape, @v) = @ARGV;
    my @dims = $shape eq 'scalar' ? () : split /x/, $shape;
    my $n = 1;
    $n *= $_ for @dims;
    die "expected $n values, got " . scalar(@v) . "\n" if @v != $n;
    my @order = (0 .. $n - 1);
    if ($cmd eq 'write-fortran') {   # element at Fortran position f comes from C index c
        @order = ();
        for my $f (0 .. $n - 1) {
            my ($rem, @idx) = ($f);
            for my $d (@dims) { push @idx, $rem % $d; $rem = int($rem / $d) }
            my $c = 0;
            $c = $c * $dims[$_] + $idx[$_] for 0 .. $#dims;
            push @order, $c;
        }
    }
    my $tuple = @dims == 1 ? "($dims[0],)" : '(' . join(', ', @dims) . ')';
    my $fortran = $cmd eq 'write-fortran' ? 'True' : 'False';
    write_file($file, "{'descr': '$descr', 'fortran_order': $fortran, 'shape': $tuple, }",
               join('', map { encode($descr, $v[$_]) } @order));
} elsif ($cmd eq 'read') {
    my $file = shift;
    open my $f, '<:raw', $file or die "$file: $!\n";
    local $/;
    my $all = <$f>;
    die "bad magic\n" unless substr($all, 0, 6) eq "\x93NUMPY";
    my $hlen = unpack('S<', substr($all, 8, 2));
    my $hdr = substr($all, 10, $hlen);
    my ($descr) = $hdr =~ /'descr': '([^']+)'/ or die "no descr\n";
    my ($shape) = $hdr =~ /'shape': \(([^)]*)\)/;
    my @dims = grep { length } map { s/\s//gr } split /,/, $shape;
    print "$descr ", (@dims ? join('x', @dims) : 'scalar'), "\n";
    my $data = substr($all, 10 + $hlen);
    my $sz = $size{$descr} // die "unknown descr $descr\n";
    for (my $i = 0; $i < length $data; $i += $sz) {
        my $v = decode($descr, substr($data, $i, $sz));
        print 0 + sprintf('%.6g', $v), "\n";
    }
} elsif ($cmd eq 'header') {
    my ($file, $dict) = @ARGV;
    write_file($file, $dict, '');
} else {
    die "unknown command $cmd\n";
}

#!/usr/bin/perl
# timeit.pl RUNS [--before 'SHELL'] -- COMMAND ARGS...
# Runs COMMAND (exec'd directly, no shell) RUNS times and prints the median wall time in
# milliseconds.  --before runs a shell snippet before each run, outside the timing.
use strict;
use warnings;
use Time::HiRes qw(time);

my $runs = shift @ARGV;
my $before;
if (@ARGV && $ARGV[0] eq '--before') { shift @ARGV; $before = shift @ARGV; }
shift @ARGV if @ARGV && $ARGV[0] eq '--';
my @t;
for (1 .. $runs) {
    system('sh', '-c', $before) if defined $before;
    my $t0 = time;
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        open STDOUT, '>', '/dev/null';
        open STDERR, '>', '/dev/null';
        exec @ARGV or exit 127;
    }
    waitpid $pid, 0;
    push @t, time - $t0;
}
@t = sort { $a <=> $b } @t;
printf "%.2f\n", 1000 * $t[int($#t / 2)];

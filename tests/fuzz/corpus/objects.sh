#!/bin/sh
# tests/fuzz/corpus/objects.sh - makes the seeds of the `object` fuzz target
# (tests/fuzz/corpus/object/): relocatable objects of the small sources in src/, each with
# code that runs at load or unload (a constructor, a destructor, a prioritised one, a static
# initialiser, a global with a destructor, .init_array/.fini_array/.preinit_array or
# .ctors/.dtors entries, an indirect function, LTO bytecode) or none, as gcc, g++, clang,
# clang++ and tcc write them.  Committed, not made by `make fuzz`: the fuzzer needs no
# compiler, and a seed stays the same across compiler versions.  (-O2: clang evaluates a
# constructor that only stores a constant at compile time, so the sources call out.)
# tests/unit/test_elfsyms.c reads some of them and knows their layout (it says so when a
# compiler of another version lays one out otherwise).
# Usage: sh tests/fuzz/corpus/objects.sh
set -eu
cd "$(dirname "$0")"
rm -f object/*.o
for cc in gcc clang tcc; do
    for f in ctor prio dtor ctors arrays ifunc plain; do
        case $cc-$f in tcc-prio|tcc-ifunc) continue ;; esac   # tcc has neither
        $cc -O2 -c "src/$f.c" -o "object/$cc-$f.o"
    done
done
for cxx in g++ clang++; do
    for f in static_init global_obj; do
        $cxx -O2 -c "src/$f.cpp" -o "object/$cxx-$f.o"
    done
done
gcc -O2 -flto -c src/ctor.c -o object/gcc-lto-ctor.o                    # .gnu.lto_ sections
g++ -O2 -fsanitize=address -c src/static_init.cpp -o object/g++-asan-static_init.o   # .init_array.00099
tcc -b -c src/ctor.c -o object/tcc-b-ctor.o                              # .bounds, .stab
tcc -g -c src/ctor.c -o object/tcc-g-ctor.o                              # unaligned headers
ls -l object

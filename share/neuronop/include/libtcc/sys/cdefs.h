/*
 * sys/cdefs.h for sources neuronop compiles with libtcc: glibc's, then __attribute__ given
 * back.  glibc's defines __attribute__(x) away for a compiler it does not take for GNU C,
 * which libtcc is not, so every attribute after a glibc header (<string.h>, <math.h>,
 * <assert.h>) was silently dropped: a packed struct grew, an aligned buffer was not, where
 * the device's compiler keeps them.  libtcc reads the attributes itself.  This folder is on
 * libtcc's include path only, before the system's.
 */
#include_next <sys/cdefs.h>
#if defined(__TINYC__) && !(defined __GNUC__ || defined __clang__)
#undef __attribute__
#endif

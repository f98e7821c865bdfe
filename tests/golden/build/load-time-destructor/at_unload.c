/* Kernel code that would run when the library unloads, in every worker: refused (a
 * destructor passed the check for load-time code before, and ran at dlclose). */
#include <neuronop.h>

int unloaded;

__attribute__((destructor)) static void at_unload(void)
{
    unloaded = 1;
}

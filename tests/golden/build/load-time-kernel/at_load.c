/* Kernel code that would run when the library loads, in every worker: refused. */
#include <neuronop.h>

__attribute__((constructor)) static void at_load(void)
{
}

/* Shape function code that would run when the library loads, the reference's worker
 * included: refused. */
#include <neuronop.h>

__attribute__((constructor)) static void at_load(void)
{
}

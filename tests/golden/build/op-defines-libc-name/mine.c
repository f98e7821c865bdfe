/* Shape function code that defines a function of math.h's: every call to it in the
 * library, a reference's too, would run this one.  Refused. */
#include <neuronop.h>

float expf(float x)
{
    return x;
}

/* A helper in shape function code that the reference calls: the reference would run code
 * of the op it judges.  Refused. */
#include <neuronop.h>

double clamp_low(double v)
{
    return v > 0 ? v : 0;
}

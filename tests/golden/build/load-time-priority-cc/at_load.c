/* A constructor with a priority, built by the system compiler (its section is
 * .init_array.00101, not .init_array): refused as any other. */
volatile int loaded;

__attribute__((constructor(101))) static void at_load(void)
{
    loaded = 1;
}

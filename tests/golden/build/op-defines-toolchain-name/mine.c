/* Shape function code that defines the hook the C runtime's start files call as a library
 * loads: it would run in every worker, the reference's included.  Refused. */
void __gmon_start__(void)
{
}

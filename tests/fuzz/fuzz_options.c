/* libFuzzer target: the command line's option parser, on the run command's table (which has
 * every kind of option), with any words: NUL-separated arguments. */
#include <stdbool.h>

#include "fuzz.h"
#include "options.h"

static const char *str;
static long num;
static double real;
static bool flag;
static struct option_list list;
static const char *const words[] = { "a", "b", NULL };

static const struct option_spec options[] = {
    OPTION('o', "output", OPT_STRING, &str, "FILE", "a string"),
    OPTION_RANGE(0, "cores", OPT_INT, &num, "N", "a ranged number", 1, 64),
    OPTION_RANGE(0, "timeout", OPT_DOUBLE, &real, "S", "a ranged real", 0.001, 86400),
    OPTION(0, "seed", OPT_INT, &num, "N", "any number"),
    { 0, "check", OPT_LIST, &list, "LIST", "a list", COMPLETE_VALUES, words, 0, 0 },
    OPTION('v', "verbose", OPT_FLAG, &flag, NULL, "a flag"),
    OPTIONS_END,
};
static const struct command_spec spec = {
    "run", "[options] ARG...", "Fuzzing.", options, 0, -1, "fuzz",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char buf[512];
    if (size >= sizeof buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[64] = { (char *)"run" };
    int argc = 1;
    for (char *p = buf; p < buf + size && argc < 63; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;
    char **args = NULL;
    int nargs = 0;
    FILE *saved = stderr;   /* the parser's messages are not under test: keep the log short */
    stderr = fopen("/dev/null", "w");
    if (parse_options(&spec, argc, argv, &args, &nargs) == 0)
        free(args);
    fclose(stderr);
    stderr = saved;
    free_option_lists(&spec);
    return 0;
}

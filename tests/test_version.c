/* version: the header's version macros agree with each other, with meson's project
 * version (argv[1]) and with what the shared library reports at run time.
 * Usage: test_version PROJECT_VERSION */
#include "whisperkv.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_version PROJECT_VERSION\n");
        return 2;
    }
    char from_parts[64];
    snprintf(from_parts, sizeof from_parts, "%d.%d.%d", WKV_VERSION_MAJOR, WKV_VERSION_MINOR,
             WKV_VERSION_PATCH);
    const char *lib = wkv_version();
    int failed = 0;
    if (strcmp(from_parts, WKV_VERSION_STRING) != 0) {
        printf("FAIL: WKV_VERSION_STRING \"%s\" but the parts make %s\n", WKV_VERSION_STRING,
               from_parts);
        failed = 1;
    }
    if (strcmp(WKV_VERSION_STRING, argv[1]) != 0) {
        printf("FAIL: the header says %s, meson's project version is %s\n",
               WKV_VERSION_STRING, argv[1]);
        failed = 1;
    }
    if (!lib || strcmp(lib, argv[1]) != 0) {
        printf("FAIL: wkv_version() is %s, meson's project version is %s\n",
               lib ? lib : "(null)", argv[1]);
        failed = 1;
    }
    if (!failed)
        printf("PASS: version %s (header, project and library)\n", lib);
    return failed;
}

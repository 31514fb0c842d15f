/* The loader at its limits (loader_limits.c), part of the `loader` test. */
#ifndef WKV_LOADER_LIMITS_H
#define WKV_LOADER_LIMITS_H

/* Runs every check, with scratch files in dir. */
void check_limits(const char *dir);

#endif

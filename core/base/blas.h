/* How the core drives OpenBLAS (see blas.c). */
#ifndef WKV_BLAS_H
#define WKV_BLAS_H

/* Makes OpenBLAS run every call on its calling thread: the contexts' pools do the
 * splitting, so each context uses exactly its own `threads`. */
void wkv__blas_single_threaded(void);

#endif

/* A growable array of ints (token ids): the prompt history, hypotheses. */
#ifndef WKV_IVEC_H
#define WKV_IVEC_H

/* A growable array of token ids. */
typedef struct {
    int *v;
    int n, cap;
} wkv__ivec;

/* Appends n ids; 0 or -1 (out of memory, the array unchanged). */
int wkv__ivec_push(wkv__ivec *a, const int *x, int n);
/* Keeps the last `keep` ids. */
void wkv__ivec_keep_last(wkv__ivec *a, int keep);

#endif

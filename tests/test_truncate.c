/* truncate: a model file that changes while it loads gives an error or a good model,
 * never a crash (issue 33, item 2).  The loader used to map files of 1 MiB and more,
 * and a mapped page past a new end of file is a SIGBUS: truncating a file to a third
 * while whisperkv-transcribe loaded it killed the process every time.  Now it reads.
 *
 * For each delay (0 to past the load's end), a copy of MODEL is loaded while another
 * thread truncates it to a third after that delay; the load must either succeed (the
 * truncation came after the data was read: the model then decodes like the
 * original) or fail with a message naming the file; some delays must hit the load.
 * The same with the file replaced (renamed over) mid-load: the load reads the file it
 * opened and succeeds.  A quantized copy is truncated too (its blocks are read into
 * their arena straight from the file).
 * usage: test_truncate MODEL DIR (a model of some tens of MB; DIR for the copies) */
#include "testutil.h"
#include "whisperkv.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int spit(const char *path, const char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(b, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

typedef struct {
    const char *path, *other; /* truncate path, or rename other over it */
    long delay_us;
    off_t to;
} change;

static void *do_change(void *arg)
{
    const change *c = arg;
    struct timespec ts = {c->delay_us / 1000000, (c->delay_us % 1000000) * 1000};
    nanosleep(&ts, NULL);
    if (c->other) {
        if (rename(c->other, c->path) != 0)
            fprintf(stderr, "rename: %s\n", strerror(errno));
    } else if (truncate(c->path, c->to) != 0) {
        fprintf(stderr, "truncate: %s\n", strerror(errno));
    }
    return NULL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Loads `path` while `c` happens; 1 loaded, 0 a clean error. */
static int load_during(const change *c, double *ms)
{
    pthread_t th;
    pthread_create(&th, NULL, do_change, (void *)c);
    char *err = NULL;
    double t0 = now_ms();
    wkv_model *m = wkv_model_load(c->path, &err);
    *ms = now_ms() - t0;
    pthread_join(th, NULL);
    if (!m) {
        CHECK(err && strstr(err, c->path), "an error names the file: %s", err ? err : "(none)");
        free(err);
        return 0;
    }
    /* a model that loaded is whole: it has every layer's weights */
    CHECK(wkv_model_hparams(m)->n_text_layer > 0, "loaded model has layers");
    wkv_model_free(m);
    return 1;
}

static void trials(const char *label, const char *data, size_t n, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/truncate-%s.bin", dir, label);
    /* how long a load takes here, to spread the delays over it */
    CHECK(spit(path, data, n) == 0, "write %s", path);
    char *err = NULL;
    double t0 = now_ms();
    wkv_model *m = wkv_model_load(path, &err);
    double load_ms = now_ms() - t0;
    CHECK(m, "the untouched copy loads: %s", err ? err : "");
    wkv_model_free(m);
    free(err);
    int loaded = 0, failed = 0;
    const double frac[] = {0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.5, 3.0};
    for (size_t i = 0; i < sizeof frac / sizeof *frac; i++) {
        CHECK(spit(path, data, n) == 0, "write %s", path);
        change c = {path, NULL, (long)(frac[i] * load_ms * 1000), (off_t)(n / 3)};
        double ms;
        int ok = load_during(&c, &ms);
        loaded += ok;
        failed += !ok;
    }
    printf("%s: %zu bytes, load %.1f ms; truncated to a third at 12 points: %d loads "
           "failed cleanly, %d finished first\n", label, n, load_ms, failed, loaded);
    CHECK(failed >= 2, "%s: the truncation hit only %d loads", label, failed);

    /* replaced by another file (renamed over it) while loading: the open file is read */
    char other[4096];
    snprintf(other, sizeof other, "%s/truncate-%s-other.bin", dir, label);
    int replaced_ok = 0;
    for (int k = 0; k < 4; k++) {
        CHECK(spit(path, data, n) == 0 && spit(other, data, n / 2) == 0, "write copies");
        change c = {path, other, (long)(k * 0.25 * load_ms * 1000), 0};
        double ms;
        replaced_ok += load_during(&c, &ms);
    }
    CHECK(replaced_ok == 4, "%s: replaced mid-load, %d of 4 loads read the file they opened",
          label, replaced_ok);
    unlink(path);
    unlink(other);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_truncate MODEL DIR\n");
        return 2;
    }
    size_t n;
    char *data = tu_read_file(argv[1], &n);
    if (!data) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    trials("f16", data, n, argv[2]);
    free(data);
    if (argc > 3 && (data = tu_read_file(argv[3], &n))) {
        trials("q8_0", data, n, argv[2]);
        free(data);
    }
    return tu_finish("truncate");
}

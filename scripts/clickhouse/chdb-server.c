/*
 * Runs ClickHouse (libchdb.so, the engine as a shared library) as a local server for tests.
 * Usage: chdb-server /path/to/libchdb.so [clickhouse-local arguments...]
 * The arguments are handed to chdb_query_cmdline() as a clickhouse-local command line; the caller
 * passes --listen_host/--http_port and a query that starts the HTTP listener and then never ends.
 */
#include <dlfcn.h>
#include <stdio.h>

typedef void *(*query_cmdline_fn)(int argc, char **argv);

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s LIBCHDB_SO [clickhouse-local args...]\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "dlopen failed: %s\n", dlerror());
        return 1;
    }
    query_cmdline_fn query = (query_cmdline_fn) dlsym(lib, "chdb_query_cmdline");
    if (!query) {
        fprintf(stderr, "chdb_query_cmdline not found: %s\n", dlerror());
        return 1;
    }
    argv[1] = "clickhouse"; /* argv[0] of the clickhouse-local command line */
    query(argc - 1, argv + 1);
    fprintf(stderr, "chdb_query_cmdline returned: the server stopped\n");
    return 1;
}

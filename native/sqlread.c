/* Strata's integer column reader: SQLite rows straight into int64 buffers.
 *
 * The one loop of the project that is not Python. ADBC's SQLite driver builds Arrow arrays
 * value by value at about twice the cost of SQLite's own scan, which made every first open
 * and every cold `stats` twice the time SQLite needs; this loop costs a type test and a copy
 * per value. It serves only what is all integers: a value of another type in an output
 * column stops the read (the caller reads that range again through ADBC, whose path names
 * the defect), and in a summarized column it is counted, so the caller can judge a whole
 * table from one scan of it.
 *
 * Built by `make` (analysis/_native.py loads it with ctypes; without it Strata reads through
 * ADBC, with the same results). Declares the few SQLite functions it calls itself, so it
 * needs no sqlite3.h, and links against the libsqlite3 that Python's sqlite3 module uses.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
extern int sqlite3_open_v2(const char *, sqlite3 **, int, const char *);
extern int sqlite3_close_v2(sqlite3 *);
extern int sqlite3_prepare_v2(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
extern int sqlite3_step(sqlite3_stmt *);
extern int sqlite3_finalize(sqlite3_stmt *);
extern int sqlite3_column_count(sqlite3_stmt *);
typedef struct sqlite3_value sqlite3_value;
extern sqlite3_value *sqlite3_column_value(sqlite3_stmt *, int);
extern int sqlite3_value_type(sqlite3_value *);
extern long long sqlite3_value_int64(sqlite3_value *);
extern const char *sqlite3_column_name(sqlite3_stmt *, int);
extern const char *sqlite3_errmsg(sqlite3 *);

enum {
    OPEN_READONLY = 0x1,
    OPEN_URI = 0x40,
    OPEN_NOMUTEX = 0x8000,
    ROW = 100,
    DONE = 101,
    T_INTEGER = 1,
    T_FLOAT = 2,
    T_TEXT = 3,
    T_BLOB = 4,
    T_NULL = 5,
};

/* Per column summary slots in `counts` (4 per column). */
enum { C_NULL = 0, C_REAL = 1, C_TEXT = 2, C_BLOB = 3 };

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *stmt;
    int ncols;
    int done;
} reader;

static void set_error(char *err, int errlen, const char *what, const char *detail) {
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s%s", what, detail ? detail : "");
}

/* Open `uri` read-only and prepare `sql`; NULL (and a message in `err`) on failure. */
void *strata_open(const char *uri, const char *sql, char *err, int errlen) {
    reader *r = calloc(1, sizeof(reader));
    if (!r) {
        set_error(err, errlen, "out of memory", NULL);
        return NULL;
    }
    if (sqlite3_open_v2(uri, &r->db, OPEN_READONLY | OPEN_URI | OPEN_NOMUTEX, NULL) != 0 ||
        sqlite3_prepare_v2(r->db, sql, -1, &r->stmt, NULL) != 0) {
        set_error(err, errlen, r->db ? sqlite3_errmsg(r->db) : "cannot open", NULL);
        if (r->db) sqlite3_close_v2(r->db);
        free(r);
        return NULL;
    }
    r->ncols = sqlite3_column_count(r->stmt);
    return r;
}

int strata_ncols(void *h) { return ((reader *)h)->ncols; }

const char *strata_colname(void *h, int i) {
    return sqlite3_column_name(((reader *)h)->stmt, i);
}

/* Fetch up to `cap` rows.
 *
 * The first `nout` columns are copied to out[c][row] (NULL -> 0), and nulls[c * cap + row]
 * says whether the value was NULL (1) or not (0). Every column is summarized across calls: counts[4c +
 * k] counts its NULL, real, text and blob values; mins[c] and maxs[c] bound its integers
 * (the caller starts them at INT64_MAX and INT64_MIN).
 *
 * Returns the rows fetched (fewer than `cap`: the statement is done), -1 on an SQLite error
 * (message in `err`), -2 when an output column holds a value that is not an integer.
 */
int64_t strata_fetch(void *h, int nout, int64_t **out, uint8_t *nulls, int64_t cap,
                     int64_t *counts, int64_t *mins, int64_t *maxs, char *err, int errlen) {
    reader *r = (reader *)h;
    int64_t n = 0;
    if (r->done) return 0;
    while (n < cap) {
        int rc = sqlite3_step(r->stmt);
        if (rc == DONE) {
            r->done = 1;
            break;
        }
        if (rc != ROW) {
            set_error(err, errlen, sqlite3_errmsg(r->db), NULL);
            return -1;
        }
        for (int c = 0; c < r->ncols; c++) {
            /* One API call per value: sqlite3_column_type and _int64 each take the
             * statement's entry and exit steps again. */
            sqlite3_value *value = sqlite3_column_value(r->stmt, c);
            int type = sqlite3_value_type(value);
            if (type == T_INTEGER) {
                int64_t v = sqlite3_value_int64(value);
                if (c < nout) {
                    out[c][n] = v;
                    nulls[(int64_t)c * cap + n] = 0;
                }
                if (v < mins[c]) mins[c] = v;
                if (v > maxs[c]) maxs[c] = v;
            } else if (type == T_NULL) {
                counts[4 * c + C_NULL]++;
                if (c < nout) {
                    out[c][n] = 0;
                    nulls[(int64_t)c * cap + n] = 1;
                }
            } else {
                if (c < nout) return -2;
                counts[4 * c + (type == T_FLOAT ? C_REAL : type == T_TEXT ? C_TEXT : C_BLOB)]++;
            }
        }
        n++;
    }
    return n;
}

void strata_close(void *h) {
    reader *r = (reader *)h;
    if (!r) return;
    sqlite3_finalize(r->stmt);
    sqlite3_close_v2(r->db);
    free(r);
}

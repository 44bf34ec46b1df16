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

/* Where both readers put values: the first `nout` columns into out[c][row] (NULL -> 0, and
 * nulls[c * cap + row] says whether it was NULL); every column summarized across calls:
 * counts[4c + k] of its NULL, real, text and blob values, mins[c] and maxs[c] bounding its
 * integers (the caller starts them at INT64_MAX and INT64_MIN). */
typedef struct {
    int nout;
    int64_t **out;
    uint8_t *nulls;
    int64_t cap;
    int64_t *counts;
    int64_t *mins;
    int64_t *maxs;
} sink;

static inline void put_int(const sink *k, int c, int64_t row, int64_t v) {
    if (c < k->nout) {
        k->out[c][row] = v;
        k->nulls[(int64_t)c * k->cap + row] = 0;
    }
    if (v < k->mins[c]) k->mins[c] = v;
    if (v > k->maxs[c]) k->maxs[c] = v;
}

static inline void put_null(const sink *k, int c, int64_t row) {
    k->counts[4 * c + C_NULL]++;
    if (c < k->nout) {
        k->out[c][row] = 0;
        k->nulls[(int64_t)c * k->cap + row] = 1;
    }
}

/* A real (slot C_REAL), text or blob value: counted; -2 where column c is returned (only
 * integers are), else 0. */
static inline int put_other(const sink *k, int c, int slot) {
    if (c < k->nout) return -2;
    k->counts[4 * c + slot]++;
    return 0;
}

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

/* Fetch up to `cap` rows into the arrays as `sink` describes them.
 *
 * Returns the rows fetched (fewer than `cap`: the statement is done), -1 on an SQLite error
 * (message in `err`), -2 when an output column holds a value that is not an integer.
 */
int64_t strata_fetch(void *h, int nout, int64_t **out, uint8_t *nulls, int64_t cap,
                     int64_t *counts, int64_t *mins, int64_t *maxs, char *err, int errlen) {
    reader *r = (reader *)h;
    const sink k = {nout, out, nulls, cap, counts, mins, maxs};
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
                put_int(&k, c, n, sqlite3_value_int64(value));
            } else if (type == T_NULL) {
                put_null(&k, c, n);
            } else {
                int slot = type == T_FLOAT ? C_REAL : type == T_TEXT ? C_TEXT : C_BLOB;
                if (put_other(&k, c, slot)) return -2;
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

/* ---------------------------------------------------------------------------------------
 * The direct reader: a table's b-tree pages parsed here, without SQLite's virtual machine.
 *
 * SQLite steps a statement through its VDBE: ~15 ns per value plus a pread per 4 KiB page,
 * four times what decoding the records costs. This walks the table b-tree of one rowid
 * table (file format: https://www.sqlite.org/fileformat2.html) from its root page, visits
 * the rows of a rowid range in rowid order and decodes the wanted fields of each record.
 * Everything it does not expect declines (-2: the caller reads the range through SQLite):
 * a page that is not a table b-tree page, a payload that spills to overflow pages, a record
 * with fewer fields than wanted, reserved serial types, rowids out of order, a pointer off
 * the file, a tree deeper than 40. Every offset is checked against its page before use.
 * -------------------------------------------------------------------------------------*/
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 40
#define MAX_FIELDS 2000 /* SQLite's default limit on a table's columns */
#define BLOCK_PAGES 256 /* leaves are read 256 pages (1 MiB at 4 KiB) at a time */
#define HEADER_CACHE 512 /* record headers up to this size are remembered (see `direct`) */

/* A wanted field of a remembered record header, delivered to column c of the sink: an
 * integer of `size` bytes at `off` from the record's start (the 8 bytes there are loaded and
 * shifted right by 64 - 8 * size: the leaf block has 8 bytes of slack past its end), a
 * constant (serial types 8 and 9: size 0, `value`), or a NULL in a returned column. NULLs
 * and other values in a column only summarized are counted per header (`tally`). */
enum { P_LOAD, P_CONST, P_NULL };
typedef struct {
    int64_t value;
    int32_t off;
    int16_t c;
    uint8_t kind;
    uint8_t shift;
} planned;

typedef struct {
    int fd;
    int64_t file_size;
    int64_t db_pages;  /* pages SQLite considers part of the database */
    int64_t lock_page; /* the page holding byte 2^30, never part of a b-tree */
    int64_t page_size;
    int64_t usable;
    uint8_t *block; /* BLOCK_PAGES pages starting at block_first (1-based page number) */
    int64_t block_first;
    int64_t block_count;
    uint8_t *interior; /* one page per depth */
    int64_t pages_seen;
    int64_t max_pages;
    /* the scan */
    int nfields;
    int max_field;
    int nmap;                  /* fields below this may be wanted */
    int16_t *column_of;        /* record field -> wanted column, -1: not wanted */
    const uint8_t *ranged;     /* per column: whether its integers' min and max are wanted */
    sink k;
    int64_t row;
    int64_t lo, hi; /* rowid range [lo, hi) */
    int64_t last_rowid; /* the last rowid seen (they must increase) */
    int have_last;
    int64_t last_emitted; /* the last rowid delivered */
    int64_t resume_after; /* rows with rowid <= this were delivered by an earlier call */
    int full;             /* this call's buffers are full */
    /* The last record header that decoded cleanly, byte for byte, with where its wanted
     * fields lie (`plan`, `nplan` entries). nsys writes the rows of a table alike: a record
     * mostly repeats the serial types of the one before it, and is then decoded from the
     * plan without walking its header again (10 M kernels: ~2x less time in this file).
     * A record's header fixes its fields' sizes, so the same header and payload size pass
     * every check the walk makes. Reset at each call (the wanted fields may change). */
    uint8_t header[HEADER_CACHE];
    int64_t header_len; /* 0: none remembered */
    uint64_t header_payload;
    int nplan;
    planned *plan;  /* MAX_FIELDS entries */
    int ntally;
    int32_t *tally; /* MAX_FIELDS slots of `counts` that each record of the header adds 1 to */
    int64_t plan_rows; /* records decoded by the plan since its tally was last added */
} direct;

static int read_varint_slow(const uint8_t *p, const uint8_t *end, uint64_t *v) {
    uint64_t x = 0;
    for (int i = 0; i < 9; i++) {
        if (p + i >= end) return 0;
        if (i == 8) {
            *v = (x << 8) | p[i];
            return 9;
        }
        x = (x << 7) | (p[i] & 0x7f);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    return 0;
}

/* A varint (1 to 9 bytes) at p, not reading at or past `end`: its length, 0 if cut short.
 * Serial types and small sizes take one byte: that case first. */
static inline int read_varint(const uint8_t *p, const uint8_t *end, uint64_t *v) {
    if (p < end && p[0] < 0x80) {
        *v = p[0];
        return 1;
    }
    return read_varint_slow(p, end, v);
}

/* Page `pgno` (1-based) through the leaf block; NULL when it is off the file. */
static const uint8_t *leaf_page(direct *d, int64_t pgno) {
    if (pgno < 1 || pgno > d->db_pages || pgno == d->lock_page) return NULL;
    if (pgno < d->block_first || pgno >= d->block_first + d->block_count) {
        int64_t count = BLOCK_PAGES;
        if (pgno - 1 + count > d->db_pages) count = d->db_pages - (pgno - 1);
        int64_t want = count * d->page_size, got = 0;
        while (got < want) {
            ssize_t n = pread(d->fd, d->block + got, (size_t)(want - got),
                              (off_t)((pgno - 1) * d->page_size + got));
            if (n <= 0) return NULL;
            got += n;
        }
        d->block_first = pgno;
        d->block_count = count;
    }
    return d->block + (pgno - d->block_first) * d->page_size;
}

/* The big-endian two's complement integer of serial type t (1-6, 8, 9) at p. */
static inline int64_t decode_int(const uint8_t *p, int t) {
    switch (t) {
    case 1:
        return (int8_t)p[0];
    case 2:
        return (int16_t)(((uint16_t)p[0] << 8) | p[1]);
    case 3: /* shifted up, then arithmetically down: the sign of the top byte */
        return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
                         ((uint32_t)p[2] << 8)) >>
               8;
    case 4:
        return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
                         p[3]);
    case 5:
        return (int64_t)(((uint64_t)p[0] << 56) | ((uint64_t)p[1] << 48) |
                         ((uint64_t)p[2] << 40) | ((uint64_t)p[3] << 32) |
                         ((uint64_t)p[4] << 24) | ((uint64_t)p[5] << 16)) >>
               16;
    case 6: {
        uint64_t x;
        memcpy(&x, p, 8);
        return (int64_t)__builtin_bswap64(x);
    }
    case 8:
        return 0;
    default: /* 9 */
        return 1;
    }
}

static const int SIZES[10] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};

/* Add the remembered header's tally (its records' NULLs and other values in summarized
 * columns) to the counts, and forget the header. */
static void drop_plan(direct *d) {
    for (int i = 0; i < d->ntally; i++) d->k.counts[d->tally[i]] += d->plan_rows;
    d->plan_rows = 0;
    d->ntally = 0;
    d->nplan = 0;
    d->header_len = 0;
}

/* A record whose header is the remembered one: its wanted fields from the plan. The output
 * arrays' NULL flags were cleared when the call began (only NULLs set them). */
static void planned_cell(direct *d, const uint8_t *rec, int64_t r, int64_t rowid) {
    const sink k = d->k;
    const planned *plan = d->plan;
    for (int i = 0, n = d->nplan; i < n; i++) {
        const planned e = plan[i];
        int64_t v = e.value;
        if (e.kind == P_NULL) {
            k.counts[4 * e.c + C_NULL]++;
            k.out[e.c][r] = 0;
            k.nulls[(int64_t)e.c * k.cap + r] = 1;
            continue;
        }
        if (e.kind == P_LOAD) {
            uint64_t x;
            memcpy(&x, rec + e.off, 8);
            v = (int64_t)__builtin_bswap64(x) >> e.shift;
        }
        if (e.c < k.nout) k.out[e.c][r] = v;
        if (v < k.mins[e.c]) k.mins[e.c] = v;
        if (v > k.maxs[e.c]) k.maxs[e.c] = v;
    }
    d->plan_rows++;
    d->row++;
    d->last_emitted = rowid;
}

/* One leaf cell; 0 ok, -2 decline. */
static int leaf_cell(direct *d, const uint8_t *page, int64_t off) {
    const uint8_t *end = page + d->usable;
    const uint8_t *p = page + off;
    uint64_t payload, rowid_u;
    int n = read_varint(p, end, &payload);
    if (!n) return -2;
    p += n;
    n = read_varint(p, end, &rowid_u);
    if (!n) return -2;
    p += n;
    int64_t rowid = (int64_t)rowid_u;
    if (payload > (uint64_t)(d->usable - 35) || p + payload > end) return -2; /* overflow */
    if (d->have_last && rowid <= d->last_rowid) return -2;
    d->have_last = 1;
    d->last_rowid = rowid;
    if (rowid < d->lo || rowid >= d->hi || rowid <= d->resume_after) return 0;
    if (d->row >= d->k.cap) {
        d->full = 1;
        return 0;
    }
    const uint8_t *rec = p, *rec_end = p + payload;
    uint64_t header;
    n = read_varint(rec, rec_end, &header);
    if (!n || header > payload || header < (uint64_t)n) return -2;
    const uint8_t *h = rec + n, *h_end = rec + header, *body = rec + header;
    int64_t r = d->row;
    if (d->header_len == (int64_t)header && d->header_payload == payload &&
        memcmp(rec, d->header, (size_t)header) == 0) {
        planned_cell(d, rec, r, rowid);
        return 0;
    }
    /* Another header: walked below, and remembered in place of the last one. */
    drop_plan(d);
    int field = 0, nplan = 0, ntally = 0;
    /* The whole header, as SQLite's OP_Column checks it: the serial types end exactly where
     * the header does, and the fields exactly where the payload does. Wanted fields are
     * decoded on the way. */
    while (h < h_end) {
        uint64_t t;
        if (*h < 0x80) { /* one-byte serial type: every integer and NULL */
            t = *h++;
        } else {
            n = read_varint(h, h_end, &t);
            if (!n) return -2;
            h += n;
        }
        if (t == 10 || t == 11) return -2;
        int64_t size = t < 12 ? SIZES[t] : (int64_t)((t - 12) / 2);
        if (body + size > rec_end) return -2;
        int c = field < d->nmap ? d->column_of[field] : -1;
        if (c >= 0) {
            planned *e = &d->plan[nplan];
            *e = (planned){0, (int32_t)(body - rec), (int16_t)c, P_LOAD, 0};
            if (t == 0 && c < d->k.nout) {
                e->kind = P_NULL;
                nplan++;
            } else if (t == 0 || t == 7 || t >= 12) { /* summarized only (or declined below) */
                int slot = t == 0 ? C_NULL : t == 7 ? C_REAL : (t & 1) ? C_TEXT : C_BLOB;
                d->tally[ntally++] = 4 * c + slot;
            } else if (c < d->k.nout || d->ranged[c]) {
                if (t >= 8) {
                    e->kind = P_CONST;
                    e->value = t == 9;
                } else {
                    e->shift = (uint8_t)(64 - 8 * SIZES[t]);
                }
                nplan++;
            } /* else an integer in a field only counted: nothing to do per record */
            if (t == 0) {
                put_null(&d->k, c, r);
            } else if (t == 7 || t >= 12) {
                if (put_other(&d->k, c, t == 7 ? C_REAL : (t & 1) ? C_TEXT : C_BLOB)) return -2;
            } else {
                put_int(&d->k, c, r, decode_int(body, (int)t));
            }
        }
        body += size;
        field++;
    }
    if (h != h_end || body != rec_end) return -2;
    if (field <= d->max_field) return -2; /* fewer fields than wanted (ALTER TABLE ADD) */
    if (header <= HEADER_CACHE) {
        memcpy(d->header, rec, (size_t)header);
        d->header_len = (int64_t)header;
        d->header_payload = payload;
        d->nplan = nplan;
        d->ntally = ntally; /* this record's own counts were added by the walk */
    }
    d->row++;
    d->last_emitted = rowid;
    return 0;
}

/* Visit page `pgno` at `depth`; 0 ok, -2 decline. Stops early once the buffers are full. */
static int visit(direct *d, int64_t pgno, int depth) {
    if (depth >= MAX_DEPTH || ++d->pages_seen > d->max_pages) return -2;
    const uint8_t *src = leaf_page(d, pgno);
    if (!src) return -2;
    int64_t hdr = pgno == 1 ? 100 : 0;
    uint8_t type = src[hdr];
    if (type == 0x0d) {
        int64_t ncells = ((int64_t)src[hdr + 3] << 8) | src[hdr + 4];
        if (hdr + 8 + 2 * ncells > d->usable) return -2;
        for (int64_t i = 0; i < ncells && !d->full; i++) {
            int64_t off = ((int64_t)src[hdr + 8 + 2 * i] << 8) | src[hdr + 8 + 2 * i + 1];
            if (off < hdr + 8 + 2 * ncells || off >= d->usable) return -2;
            if (leaf_cell(d, src, off)) return -2;
        }
        return 0;
    }
    if (type != 0x05) return -2;
    /* Interior: copy the page (the leaf block is reused while its children are read). */
    uint8_t *page = d->interior + (int64_t)depth * d->page_size;
    memcpy(page, src, (size_t)d->page_size);
    int64_t ncells = ((int64_t)page[hdr + 3] << 8) | page[hdr + 4];
    if (hdr + 12 + 2 * ncells > d->usable) return -2;
    int64_t prev = INT64_MIN;
    int prev_set = 0;
    for (int64_t i = 0; i <= ncells && !d->full; i++) {
        int64_t child, key = INT64_MAX;
        int last = i == ncells;
        if (last) {
            child = ((int64_t)page[hdr + 8] << 24) | (page[hdr + 9] << 16) | (page[hdr + 10] << 8) |
                    page[hdr + 11];
        } else {
            int64_t off = ((int64_t)page[hdr + 12 + 2 * i] << 8) | page[hdr + 12 + 2 * i + 1];
            if (off < hdr + 12 + 2 * ncells || off + 4 >= d->usable) return -2;
            const uint8_t *c = page + off;
            child = ((int64_t)c[0] << 24) | (c[1] << 16) | (c[2] << 8) | c[3];
            uint64_t k;
            if (!read_varint(c + 4, page + d->usable, &k)) return -2;
            key = (int64_t)k;
            if (prev_set && key < prev) return -2;
        }
        /* child holds rowids in (prev, key]; the last child those above prev */
        int skip = (!last && key < d->lo) || (prev_set && prev >= d->hi - 1) ||
                   (!last && key <= d->resume_after);
        if (!skip && visit(d, child, depth + 1)) return -2;
        prev = key;
        prev_set = !last;
    }
    return 0;
}

void strata_direct_close(void *h);

/* Open `path` for direct reads; NULL when it cannot be opened or its header is odd. */
void *strata_direct_open(const char *path) {
    direct *d = calloc(1, sizeof(direct));
    if (!d) return NULL;
    d->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    uint8_t head[100];
    if (d->fd < 0 || fstat(d->fd, &st) != 0 || pread(d->fd, head, 100, 0) != 100 ||
        memcmp(head, "SQLite format 3", 16) != 0)
        goto fail;
    d->page_size = ((int64_t)head[16] << 8) | head[17];
    if (d->page_size == 1) d->page_size = 65536;
    if (d->page_size < 512 || (d->page_size & (d->page_size - 1))) goto fail;
    d->usable = d->page_size - head[20];
    if (d->usable < 480) goto fail;
    d->file_size = st.st_size;
    d->db_pages = d->file_size / d->page_size;
    /* The header's page count, where valid (its change counter matches "version valid
     * for"), bounds the database as SQLite bounds it: pages past it are not SQLite's. */
    int64_t in_header = ((int64_t)head[28] << 24) | (head[29] << 16) | (head[30] << 8) | head[31];
    if (in_header > 0 && memcmp(head + 24, head + 92, 4) == 0 && in_header < d->db_pages)
        d->db_pages = in_header;
    d->lock_page = 0x40000000 / d->page_size + 1;
    d->max_pages = d->db_pages + 1;
    d->block = malloc((size_t)(BLOCK_PAGES * d->page_size) + 8); /* 8: see `planned` */
    d->interior = malloc((size_t)(MAX_DEPTH * d->page_size));
    d->column_of = malloc(MAX_FIELDS * sizeof(int16_t));
    d->plan = malloc(MAX_FIELDS * sizeof(planned));
    d->tally = malloc(MAX_FIELDS * sizeof(int32_t));
    if (!d->block || !d->interior || !d->column_of || !d->plan || !d->tally) goto fail;
    return d;
fail:
    strata_direct_close(d);
    return NULL;
}

/* Read up to `cap` rows with rowid in [lo, hi) of the table whose root is `root`, after
 * rowid `resume_after` (the last rowid of the previous call, or lo - 1). Field `fields[c]`
 * of each record is column c of the sink. `ranged[c]` zero: column c's min and max are not
 * wanted (only counted, a summarized column's integers are then skipped in records of a
 * remembered header, and its min and max are meaningless). Returns the rows read (fewer
 * than `cap`: the range is done), -2: declined. `last` receives the last rowid delivered. */
int64_t strata_direct_fetch(void *h, int64_t root, int64_t lo, int64_t hi, int64_t resume_after,
                            int nfields, const int *fields, const uint8_t *ranged, int nout,
                            int64_t **out, uint8_t *nulls, int64_t cap, int64_t *counts,
                            int64_t *mins, int64_t *maxs, int64_t *last) {
    direct *d = (direct *)h;
    if (nfields < 1 || nfields > MAX_FIELDS) return -2;
    d->nfields = nfields;
    d->max_field = 0;
    for (int c = 0; c < nfields; c++) {
        if (fields[c] < 0 || fields[c] >= MAX_FIELDS) return -2;
        if (fields[c] > d->max_field) d->max_field = fields[c];
    }
    d->nmap = d->max_field + 1;
    for (int f = 0; f < d->nmap; f++) d->column_of[f] = -1;
    for (int c = 0; c < nfields; c++) {
        if (d->column_of[fields[c]] >= 0) return -2; /* a field wanted twice */
        d->column_of[fields[c]] = (int16_t)c;
    }
    d->k = (sink){nout, out, nulls, cap, counts, mins, maxs};
    d->ranged = ranged;
    d->row = 0;
    d->lo = lo;
    d->hi = hi;
    d->have_last = 0;
    d->resume_after = resume_after;
    d->full = 0;
    d->header_len = 0;
    d->nplan = d->ntally = 0;
    d->plan_rows = 0;
    d->pages_seen = 0;
    if (nout > 0) memset(nulls, 0, (size_t)nout * (size_t)cap);
    int declined = visit(d, root, 0);
    drop_plan(d);
    if (declined) return -2;
    *last = d->row ? d->last_emitted : resume_after;
    return d->row;
}

void strata_direct_close(void *h) {
    direct *d = (direct *)h;
    if (!d) return;
    if (d->fd >= 0) close(d->fd);
    free(d->block);
    free(d->interior);
    free(d->column_of);
    free(d->plan);
    free(d->tally);
    free(d);
}

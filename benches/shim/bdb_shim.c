/* bdb_shim.c: a narrow C interface over Berkeley DB 5.3 for quire-bench.
 *
 * One environment (DB_INIT_TXN|LOCK|LOG|MPOOL, synchronous commit: the durable mode
 * BENCHMARKS.md asks for) holding one database of kind B-tree (0), Queue (1,
 * fixed-length records of re_len bytes) or Recno (2), both opened DB_THREAD so that
 * several handles (bdb_clone), one per thread, share them: T7's concurrent writers,
 * whose commits Berkeley DB groups into shared log flushes. Deadlocks between writers
 * are broken by the lock detector (DB_LOCK_DEFAULT); the caller aborts and retries.
 * Writes happen inside an explicit transaction: bdb_begin, then puts/appends/deletes,
 * then bdb_commit (fsync of the log) or bdb_abort. Reads run without a transaction.
 * Every function returns 0 or a Berkeley DB error code; bdb_error_text explains it.
 * Read next: benches/src/peers/bdb.rs, the only caller.
 */
#include <db.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The environment and database, shared by every handle of one bdb_open. */
typedef struct bdb_shared {
    DB_ENV *env;
    DB *db;
    int refs; /* handles alive; the last bdb_close closes the database */
} bdb_shared;

typedef struct bdb_handle {
    bdb_shared *s;
    DB_TXN *txn;
    int kind;
} bdb_handle;

const char *bdb_error_text(int code) { return db_strerror(code); }

static int open_env(DB_ENV **out, const char *dir, uint64_t cache_bytes) {
    int rc = db_env_create(out, 0);
    if (rc != 0) return rc;
    DB_ENV *env = *out;
    if (cache_bytes > 0) {
        rc = env->set_cachesize(env, (uint32_t)(cache_bytes >> 30),
                                   (uint32_t)(cache_bytes & ((1u << 30) - 1)), 1);
        if (rc != 0) return rc;
    }
    /* The default lock table cannot hold a 100k-put transaction. */
    if ((rc = env->set_lk_max_locks(env, 2000000)) != 0) return rc;
    if ((rc = env->set_lk_max_objects(env, 2000000)) != 0) return rc;
    if ((rc = env->set_lk_max_lockers(env, 10000)) != 0) return rc;
    if ((rc = env->set_lk_detect(env, DB_LOCK_DEFAULT)) != 0) return rc;
    if ((rc = env->set_lg_bsize(env, 8u << 20)) != 0) return rc;
    if ((rc = env->set_lg_max(env, 64u << 20)) != 0) return rc;
    if ((rc = env->log_set_config(env, DB_LOG_AUTO_REMOVE, 1)) != 0) return rc;
    return env->open(env, dir,
                     DB_CREATE | DB_INIT_TXN | DB_INIT_LOCK | DB_INIT_LOG | DB_INIT_MPOOL |
                         DB_RECOVER | DB_THREAD,
                     0644);
}

static int open_db(bdb_shared *s, int kind, uint32_t re_len) {
    DBTYPE type = kind == 0 ? DB_BTREE : (kind == 1 ? DB_QUEUE : DB_RECNO);
    int rc = db_create(&s->db, s->env, 0);
    if (rc != 0) return rc;
    if ((rc = s->db->set_pagesize(s->db, 8192)) != 0) return rc;
    if (kind == 1) {
        if ((rc = s->db->set_re_len(s->db, re_len)) != 0) return rc;
    }
    return s->db->open(s->db, NULL, "data.db", NULL, type, DB_CREATE | DB_AUTO_COMMIT | DB_THREAD,
                       0644);
}

void bdb_close(bdb_handle *h) {
    if (h == NULL) return;
    if (h->txn != NULL) h->txn->abort(h->txn);
    bdb_shared *s = h->s;
    free(h);
    if (s == NULL || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    if (s->db != NULL) s->db->close(s->db, 0);
    if (s->env != NULL) s->env->close(s->env, 0);
    free(s);
}

int bdb_open(const char *dir, int kind, uint32_t re_len, uint64_t cache_bytes, bdb_handle **out) {
    bdb_handle *h = calloc(1, sizeof(bdb_handle));
    if (h == NULL) return ENOMEM;
    h->kind = kind;
    h->s = calloc(1, sizeof(bdb_shared));
    if (h->s == NULL) {
        free(h);
        return ENOMEM;
    }
    h->s->refs = 1;
    int rc = open_env(&h->s->env, dir, cache_bytes);
    if (rc == 0) rc = open_db(h->s, kind, re_len);
    if (rc != 0) {
        bdb_close(h);
        return rc;
    }
    *out = h;
    return 0;
}

/* Another handle on the same environment and database, for another thread. */
int bdb_clone(bdb_handle *h, bdb_handle **out) {
    bdb_handle *c = calloc(1, sizeof(bdb_handle));
    if (c == NULL) return ENOMEM;
    c->kind = h->kind;
    c->s = h->s;
    __atomic_add_fetch(&h->s->refs, 1, __ATOMIC_ACQ_REL);
    *out = c;
    return 0;
}

int bdb_begin(bdb_handle *h) { return h->s->env->txn_begin(h->s->env, NULL, &h->txn, 0); }

int bdb_commit(bdb_handle *h) {
    int rc = h->txn->commit(h->txn, 0);
    h->txn = NULL;
    return rc;
}

/* Ends the open transaction without its changes (after a deadlock, to retry). */
int bdb_abort(bdb_handle *h) {
    int rc = h->txn->abort(h->txn);
    h->txn = NULL;
    return rc;
}

static void set_dbt(DBT *d, const void *data, size_t len) {
    memset(d, 0, sizeof(DBT));
    d->data = (void *)data;
    d->size = (uint32_t)len;
}

int bdb_put(bdb_handle *h, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl) {
    DBT key, val;
    set_dbt(&key, k, kl);
    set_dbt(&val, v, vl);
    return h->s->db->put(h->s->db, h->txn, &key, &val, 0);
}

int bdb_delete(bdb_handle *h, const uint8_t *k, size_t kl) {
    DBT key;
    set_dbt(&key, k, kl);
    return h->s->db->del(h->s->db, h->txn, &key, 0);
}

/* Queue and Recno: append a record; the database assigns the record number. */
int bdb_append(bdb_handle *h, const uint8_t *v, size_t vl) {
    db_recno_t recno = 0;
    DBT key, val;
    memset(&key, 0, sizeof(DBT));
    key.data = &recno;
    key.ulen = sizeof(recno);
    key.flags = DB_DBT_USERMEM;
    set_dbt(&val, v, vl);
    return h->s->db->put(h->s->db, h->txn, &key, &val, DB_APPEND);
}

/* Point read into the caller's buffer; *found is 1 when read, 0 on DB_NOTFOUND, and 2
 * when the value is larger than cap (then *vlen carries the needed size). */
int bdb_get(bdb_handle *h, const uint8_t *k, size_t kl, uint8_t *out, size_t cap, size_t *vlen,
            int *found) {
    DBT key, val;
    set_dbt(&key, k, kl);
    memset(&val, 0, sizeof(DBT));
    val.data = out;
    val.ulen = (uint32_t)cap;
    val.flags = DB_DBT_USERMEM;
    int rc = h->s->db->get(h->s->db, NULL, &key, &val, 0);
    *found = 0;
    *vlen = val.size;
    if (rc == DB_NOTFOUND) return 0;
    if (rc == DB_BUFFER_SMALL) {
        *found = 2;
        return 0;
    }
    if (rc == 0) *found = 1;
    return rc;
}

/* Full scan in key order; calls visit(ctx, key, key_len, data, len) for every record. */
int bdb_scan(bdb_handle *h,
             void (*visit)(void *, const uint8_t *, size_t, const uint8_t *, size_t),
             void *ctx) {
    DBC *cursor;
    DBT key, val;
    int rc = h->s->db->cursor(h->s->db, NULL, &cursor, 0);
    if (rc != 0) return rc;
    memset(&key, 0, sizeof(DBT));
    memset(&val, 0, sizeof(DBT));
    /* A DB_THREAD handle returns data only into memory the caller manages. */
    key.flags = DB_DBT_REALLOC;
    val.flags = DB_DBT_REALLOC;
    while ((rc = cursor->get(cursor, &key, &val, DB_NEXT)) == 0) {
        visit(ctx, (const uint8_t *)key.data, key.size, (const uint8_t *)val.data, val.size);
    }
    cursor->close(cursor);
    free(key.data);
    free(val.data);
    return rc == DB_NOTFOUND ? 0 : rc;
}

/* Flush the memory pool so the file size reflects the data. */
int bdb_sync(bdb_handle *h) { return h->s->db->sync(h->s->db, 0); }

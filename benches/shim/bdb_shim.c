/* bdb_shim.c: a narrow C interface over Berkeley DB 5.3 for quire-bench.
 *
 * One handle = one transactional environment (DB_INIT_TXN|LOCK|LOG|MPOOL, synchronous
 * commit: the durable mode BENCHMARKS.md asks for) holding one database of kind
 * B-tree (0), Queue (1, fixed-length records of re_len bytes) or Recno (2).
 * Writes happen inside an explicit transaction: bdb_begin, then puts/appends/deletes,
 * then bdb_commit (fsync of the log). Reads run without a transaction.
 * Every function returns 0 or a Berkeley DB error code; bdb_error_text explains it.
 * Read next: benches/src/peers/bdb.rs, the only caller.
 */
#include <db.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct bdb_handle {
    DB_ENV *env;
    DB *db;
    DB_TXN *txn;
    int kind;
} bdb_handle;

const char *bdb_error_text(int code) { return db_strerror(code); }

static int open_env(bdb_handle *h, const char *dir, uint64_t cache_bytes) {
    int rc = db_env_create(&h->env, 0);
    if (rc != 0) return rc;
    if (cache_bytes > 0) {
        rc = h->env->set_cachesize(h->env, (uint32_t)(cache_bytes >> 30),
                                   (uint32_t)(cache_bytes & ((1u << 30) - 1)), 1);
        if (rc != 0) return rc;
    }
    /* The default lock table cannot hold a 100k-put transaction. */
    if ((rc = h->env->set_lk_max_locks(h->env, 2000000)) != 0) return rc;
    if ((rc = h->env->set_lk_max_objects(h->env, 2000000)) != 0) return rc;
    if ((rc = h->env->set_lk_max_lockers(h->env, 10000)) != 0) return rc;
    if ((rc = h->env->set_lg_bsize(h->env, 8u << 20)) != 0) return rc;
    if ((rc = h->env->set_lg_max(h->env, 64u << 20)) != 0) return rc;
    if ((rc = h->env->log_set_config(h->env, DB_LOG_AUTO_REMOVE, 1)) != 0) return rc;
    return h->env->open(h->env, dir,
                        DB_CREATE | DB_INIT_TXN | DB_INIT_LOCK | DB_INIT_LOG | DB_INIT_MPOOL |
                            DB_RECOVER,
                        0644);
}

static int open_db(bdb_handle *h, uint32_t re_len) {
    DBTYPE type = h->kind == 0 ? DB_BTREE : (h->kind == 1 ? DB_QUEUE : DB_RECNO);
    int rc = db_create(&h->db, h->env, 0);
    if (rc != 0) return rc;
    if ((rc = h->db->set_pagesize(h->db, 8192)) != 0) return rc;
    if (h->kind == 1) {
        if ((rc = h->db->set_re_len(h->db, re_len)) != 0) return rc;
    }
    return h->db->open(h->db, NULL, "data.db", NULL, type, DB_CREATE | DB_AUTO_COMMIT, 0644);
}

void bdb_close(bdb_handle *h) {
    if (h == NULL) return;
    if (h->txn != NULL) h->txn->abort(h->txn);
    if (h->db != NULL) h->db->close(h->db, 0);
    if (h->env != NULL) h->env->close(h->env, 0);
    free(h);
}

int bdb_open(const char *dir, int kind, uint32_t re_len, uint64_t cache_bytes, bdb_handle **out) {
    bdb_handle *h = calloc(1, sizeof(bdb_handle));
    if (h == NULL) return ENOMEM;
    h->kind = kind;
    int rc = open_env(h, dir, cache_bytes);
    if (rc == 0) rc = open_db(h, re_len);
    if (rc != 0) {
        bdb_close(h);
        return rc;
    }
    *out = h;
    return 0;
}

int bdb_begin(bdb_handle *h) { return h->env->txn_begin(h->env, NULL, &h->txn, 0); }

int bdb_commit(bdb_handle *h) {
    int rc = h->txn->commit(h->txn, 0);
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
    return h->db->put(h->db, h->txn, &key, &val, 0);
}

int bdb_delete(bdb_handle *h, const uint8_t *k, size_t kl) {
    DBT key;
    set_dbt(&key, k, kl);
    return h->db->del(h->db, h->txn, &key, 0);
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
    return h->db->put(h->db, h->txn, &key, &val, DB_APPEND);
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
    int rc = h->db->get(h->db, NULL, &key, &val, 0);
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
    int rc = h->db->cursor(h->db, NULL, &cursor, 0);
    if (rc != 0) return rc;
    memset(&key, 0, sizeof(DBT));
    memset(&val, 0, sizeof(DBT));
    while ((rc = cursor->get(cursor, &key, &val, DB_NEXT)) == 0) {
        visit(ctx, (const uint8_t *)key.data, key.size, (const uint8_t *)val.data, val.size);
    }
    cursor->close(cursor);
    return rc == DB_NOTFOUND ? 0 : rc;
}

/* Flush the memory pool so the file size reflects the data. */
int bdb_sync(bdb_handle *h) { return h->db->sync(h->db, 0); }

// spatial_shim.cpp: a narrow C interface over two in-process R-tree peers for
// quire-bench: Boost.Geometry's rtree (rstar<16> or quadratic<16>, insert or packing
// constructor) and libspatialindex's C API (R*-tree, memory or disk storage, STR bulk
// load through a data stream). Points only (a box with min == max), 2 or 5 dimensions,
// ids are u64. Window queries report the count and the wrapping sum of ids; kNN writes
// at most k ids. Every function returns 0 on success, nonzero on failure.
// Read next: benches/src/peers/boost.rs and benches/src/peers/spatialindex.rs.
#include <boost/geometry.hpp>
#include <boost/geometry/index/rtree.hpp>
#include <spatialindex/capi/sidx_api.h>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

namespace bg = boost::geometry;
namespace bgi = boost::geometry::index;

struct SpatialIndex {
    virtual ~SpatialIndex() = default;
    virtual void insert(uint64_t id, const double *p) = 0;
    virtual void bulk(size_t n, const uint64_t *ids, const double *pts) = 0;
    virtual void window(const double *lo, const double *hi, uint64_t *count, uint64_t *idsum) = 0;
    virtual size_t knn(const double *p, size_t k, uint64_t *out) = 0;
};

template <size_t D, class Params> struct BoostIndex : SpatialIndex {
    using Point = bg::model::point<double, D, bg::cs::cartesian>;
    using Box = bg::model::box<Point>;
    using Value = std::pair<Point, uint64_t>;
    bgi::rtree<Value, Params> tree;

    template <size_t... I> static Point make(const double *p, std::index_sequence<I...>) {
        Point pt;
        (bg::set<I>(pt, p[I]), ...);
        return pt;
    }
    static Point point(const double *p) { return make(p, std::make_index_sequence<D>{}); }

    void insert(uint64_t id, const double *p) override { tree.insert(Value(point(p), id)); }
    void bulk(size_t n, const uint64_t *ids, const double *pts) override {
        std::vector<Value> values;
        values.reserve(n);
        for (size_t i = 0; i < n; i++) values.emplace_back(point(pts + i * D), ids[i]);
        tree = bgi::rtree<Value, Params>(values.begin(), values.end());
    }
    void window(const double *lo, const double *hi, uint64_t *count, uint64_t *idsum) override {
        Box box(point(lo), point(hi));
        uint64_t c = 0, s = 0;
        for (auto it = tree.qbegin(bgi::intersects(box)); it != tree.qend(); ++it) {
            c++;
            s += it->second;
        }
        *count = c;
        *idsum = s;
    }
    size_t knn(const double *p, size_t k, uint64_t *out) override {
        size_t n = 0;
        for (auto it = tree.qbegin(bgi::nearest(point(p), (unsigned)k)); it != tree.qend(); ++it) {
            if (n < k) out[n++] = it->second;
        }
        return n;
    }
};

template <size_t D> static SpatialIndex *make_boost(int variant) {
    if (variant == 0) return new BoostIndex<D, bgi::rstar<16>>();
    return new BoostIndex<D, bgi::quadratic<16>>();
}

extern "C" {

void *boost_rtree_new(uint32_t dims, int variant) {
    try {
        if (dims == 2) return make_boost<2>(variant);
        if (dims == 5) return make_boost<5>(variant);
    } catch (...) {
    }
    return nullptr;
}

void boost_rtree_free(void *h) { delete static_cast<SpatialIndex *>(h); }

int boost_rtree_insert(void *h, uint64_t id, const double *p) {
    try {
        static_cast<SpatialIndex *>(h)->insert(id, p);
        return 0;
    } catch (...) {
        return 1;
    }
}

int boost_rtree_bulk(void *h, size_t n, const uint64_t *ids, const double *pts) {
    try {
        static_cast<SpatialIndex *>(h)->bulk(n, ids, pts);
        return 0;
    } catch (...) {
        return 1;
    }
}

int boost_rtree_window(void *h, const double *lo, const double *hi, uint64_t *count,
                       uint64_t *idsum) {
    try {
        static_cast<SpatialIndex *>(h)->window(lo, hi, count, idsum);
        return 0;
    } catch (...) {
        return 1;
    }
}

int boost_rtree_knn(void *h, const double *p, size_t k, uint64_t *out, size_t *n) {
    try {
        *n = static_cast<SpatialIndex *>(h)->knn(p, k, out);
        return 0;
    } catch (...) {
        return 1;
    }
}

// ---- libspatialindex (C API) ----

static IndexPropertyH sidx_props(uint32_t dims, int disk, const char *path) {
    IndexPropertyH props = IndexProperty_Create();
    IndexProperty_SetIndexType(props, RT_RTree);
    IndexProperty_SetIndexVariant(props, RT_Star);
    IndexProperty_SetDimension(props, dims);
    IndexProperty_SetPagesize(props, 8192);
    if (disk) {
        IndexProperty_SetIndexStorage(props, RT_Disk);
        IndexProperty_SetOverwrite(props, 1);
        IndexProperty_SetFileName(props, path);
    } else {
        IndexProperty_SetIndexStorage(props, RT_Memory);
    }
    return props;
}

void *sidx_new(uint32_t dims, int disk, const char *path) {
    IndexPropertyH props = sidx_props(dims, disk, path);
    IndexH idx = Index_Create(props);
    IndexProperty_Destroy(props);
    return idx;
}

// The stream callback of Index_CreateWithStream takes no context pointer, so the
// bulk-load cursor is process-global; bulk loads are never concurrent in quire-bench.
static struct {
    size_t next, n;
    uint32_t dims;
    const uint64_t *ids;
    const double *pts;
} stream_state;

static int sidx_read_next(int64_t *id, double **pmin, double **pmax, uint32_t *ndims,
                          const uint8_t **data, size_t *len) {
    if (stream_state.next >= stream_state.n) return 1;
    size_t i = stream_state.next++;
    *id = (int64_t)stream_state.ids[i];
    *pmin = const_cast<double *>(stream_state.pts + i * stream_state.dims);
    *pmax = *pmin;
    *ndims = stream_state.dims;
    *data = nullptr;
    *len = 0;
    return 0;
}

void *sidx_new_bulk(uint32_t dims, int disk, const char *path, size_t n, const uint64_t *ids,
                    const double *pts) {
    stream_state.next = 0;
    stream_state.n = n;
    stream_state.dims = dims;
    stream_state.ids = ids;
    stream_state.pts = pts;
    IndexPropertyH props = sidx_props(dims, disk, path);
    IndexH idx = Index_CreateWithStream(props, sidx_read_next);
    IndexProperty_Destroy(props);
    return idx;
}

void sidx_free(void *h) { Index_Destroy(static_cast<IndexH>(h)); }

void sidx_flush(void *h) { Index_Flush(static_cast<IndexH>(h)); }

int sidx_insert(void *h, uint32_t dims, uint64_t id, const double *p) {
    double *q = const_cast<double *>(p);
    return Index_InsertData(static_cast<IndexH>(h), (int64_t)id, q, q, dims, nullptr, 0) != RT_None;
}

int sidx_window(void *h, uint32_t dims, const double *lo, const double *hi, uint64_t *count,
                uint64_t *idsum) {
    int64_t *ids = nullptr;
    uint64_t n = 0;
    RTError rc = Index_Intersects_id(static_cast<IndexH>(h), const_cast<double *>(lo),
                                     const_cast<double *>(hi), dims, &ids, &n);
    if (rc != RT_None) return 1;
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++) s += (uint64_t)ids[i];
    *count = n;
    *idsum = s;
    Index_Free(ids);
    return 0;
}

int sidx_knn(void *h, uint32_t dims, const double *p, size_t k, uint64_t *out, size_t *n) {
    int64_t *ids = nullptr;
    uint64_t got = k;
    double *q = const_cast<double *>(p);
    RTError rc = Index_NearestNeighbors_id(static_cast<IndexH>(h), q, q, dims, &ids, &got);
    if (rc != RT_None) return 1;
    size_t m = got < k ? (size_t)got : k;  // may return more than k on ties
    for (size_t i = 0; i < m; i++) out[i] = (uint64_t)ids[i];
    *n = m;
    Index_Free(ids);
    return 0;
}
}

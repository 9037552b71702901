//! Build script of quiredb-bench: compiles the native peer shims when the `peers`
//! feature is on (Berkeley DB 5.3 in C; Boost.Geometry rtree and libspatialindex in
//! C++) and links the Debian libraries `benches/install-peers.sh` installs.
//! Without the feature nothing native is built, so the core workspace build never
//! needs these packages.

fn main() {
    println!("cargo:rerun-if-changed=shim/bdb_shim.c");
    println!("cargo:rerun-if-changed=shim/spatial_shim.cpp");
    if std::env::var_os("CARGO_FEATURE_PEERS").is_none() {
        return;
    }
    cc::Build::new().file("shim/bdb_shim.c").warnings(true).opt_level(2).compile("quire_bdb_shim");
    cc::Build::new()
        .cpp(true)
        .file("shim/spatial_shim.cpp")
        .define("BOOST_ALLOW_DEPRECATED_HEADERS", None)
        .flag_if_supported("-std=c++17")
        // Boost's own headers warn (maybe-uninitialized, deprecations); not our code.
        .flag_if_supported("-w")
        .opt_level(2)
        .compile("quire_spatial_shim");
    println!("cargo:rustc-link-lib=dylib=db-5.3");
    println!("cargo:rustc-link-lib=dylib=spatialindex_c");
    println!("cargo:rustc-link-lib=dylib=spatialindex");
    println!("cargo:rustc-link-lib=dylib=stdc++");
}

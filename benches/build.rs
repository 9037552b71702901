//! Build script of quiredb-bench: compiles the native peer shims when the `peers`
//! feature is on (Berkeley DB 5.3 in C; Boost.Geometry rtree and libspatialindex in
//! C++) and links the Debian libraries `benches/install-peers.sh` installs.
//! Without the feature nothing native is built, so the core workspace build never
//! needs these packages.
//!
//! It also records the commit the binary is built from (`QUIRE_BUILD_COMMIT`, with
//! `+dirty` when the sources differ from it): results must name the code that made
//! them, not whatever the checkout holds when a long run ends.

use std::process::Command;

/// Source folders whose changes make the binary differ from its commit.
const SOURCES: [&str; 7] = ["../engine", "../structures", "../xml", "../datasets", "../src", "src", "shim"];

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn build_commit() -> String {
    let Some(mut commit) = git(&["rev-parse", "--short=12", "HEAD"]) else {
        return "unknown".to_string();
    };
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(SOURCES);
    if git(&status).is_some_and(|s| !s.is_empty()) {
        commit.push_str("+dirty");
    }
    commit
}

fn main() {
    println!("cargo:rustc-env=QUIRE_BUILD_COMMIT={}", build_commit());
    println!("cargo:rerun-if-changed=../.git/logs/HEAD");
    for dir in SOURCES {
        println!("cargo:rerun-if-changed={dir}");
    }
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

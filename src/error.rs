//! The one error type of the facade: [`Error`] holds the error of any crate of the
//! workspace, so an application that uses several structures returns
//! [`Result`] and writes `?` everywhere. Each crate's own error stays
//! reachable (match the variant, or `std::error::Error::source`).

/// Everything a QuireDB call made through this crate can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The engine failed: I/O, a corrupted page, the catalog, a second writer, …
    #[error(transparent)]
    Engine(#[from] quiredb_engine::Error),
    /// A structure failed: a key too large, a bad R-tree box, a corrupted node, …
    #[error(transparent)]
    Structures(#[from] quiredb_structures::Error),
    /// The XML store or XPath failed: a syntax error, malformed XML, …
    #[error(transparent)]
    Xml(#[from] quiredb_xml::Error),
    /// Loading or generating a data set failed: a bad CSV field, a bad argument, …
    #[error(transparent)]
    Datasets(#[from] quiredb_datasets::Error),
    /// An I/O operation of the application's own failed (a temporary directory, an
    /// input file), outside the database.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// Result alias of the facade.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_crates_error_converts_and_keeps_its_message() {
        // Proves: `?` lifts each crate's error into the facade's, with the same text.
        let engine: Error = quiredb_engine::Error::ReadOnly.into();
        assert!(matches!(engine, Error::Engine(quiredb_engine::Error::ReadOnly)), "{engine:?}");
        assert_eq!(engine.to_string(), quiredb_engine::Error::ReadOnly.to_string());
        let too_large = || quiredb_structures::Error::KeyTooLarge { len: 9000, max: 2000 };
        let structures: Error = too_large().into();
        assert_eq!(structures.to_string(), too_large().to_string());
        let xml: Error = quiredb_xml::xpath::parse("//[").expect_err("not XPath").into();
        assert!(matches!(xml, Error::Xml(_)), "{xml:?}");
        let datasets: Error = quiredb_datasets::Error::Argument("no rows".into()).into();
        assert_eq!(datasets.to_string(), "invalid argument: no rows");
    }
}

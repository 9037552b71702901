//! [`Name`]: a structure's catalog name as an open handle holds it: copied inline when
//! short, so that opening a structure remembered for its snapshot (`opened.rs`)
//! allocates nothing and touches no counter shared between threads; shared
//! (`Arc<str>`) when long.

use std::sync::Arc;

/// Longest name held inline.
const INLINE: usize = 30;

/// See the module docs.
#[derive(Clone)]
pub(crate) enum Name {
    Inline { len: u8, bytes: [u8; INLINE] },
    Shared(Arc<str>),
}

impl Name {
    pub(crate) fn new(name: &str) -> Name {
        match u8::try_from(name.len()) {
            Ok(len) if name.len() <= INLINE => {
                let mut bytes = [0u8; INLINE];
                bytes[..name.len()].copy_from_slice(name.as_bytes());
                Name::Inline { len, bytes }
            }
            _ => Name::Shared(name.into()),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            // The bytes were copied whole from a `str`: always UTF-8.
            Name::Inline { len, bytes } => std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default(),
            Name::Shared(name) => name,
        }
    }
}

impl std::ops::Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::Name;

    #[test]
    fn a_name_reads_back_whatever_its_length() {
        let long = ["é".repeat(15), "x".repeat(30), "y".repeat(31), "ü".repeat(200)];
        for name in ["", "points"].into_iter().chain(long.iter().map(String::as_str)) {
            let held = Name::new(name);
            assert_eq!(held.as_str(), name);
            assert_eq!(&*held.clone(), name);
            assert_eq!(matches!(held, Name::Inline { .. }), name.len() <= 30, "{name:?}");
        }
    }
}

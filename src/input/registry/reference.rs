//! An image reference as OMMX users write it (`ghcr.io/org/name:tag`,
//! `name@sha256:…`), and the keys OMMX 2.9.3 and 3.0 file it under, which
//! differ: 2.9.3 (through ocipkg 0.4) takes whatever precedes the first `/`
//! for the registry host (`registry-1.docker.io` when there is no `/`) and
//! keeps the image in the directory `HOST[__PORT]/NAME/__TAG`, a digest
//! stored as the tag `sha256__HEX`; 3.0 normalizes the name as Docker does
//! (`ubuntu` is `docker.io/library/ubuntu`) and keys its index by
//! repository and tag (or digest).
//!
//! Only a reference with an explicit tag or digest is taken for an image:
//! a bare word (`problem.ommx`) is a file that is not there, not the image
//! `docker.io/library/problem.ommx:latest`.

use std::path::PathBuf;

/// A parsed image reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// As given.
    pub given: String,
    /// Everything before the tag or digest.
    name: String,
    /// The tag, or the digest (`sha256:HEX`) when one is given.
    reference: String,
    is_digest: bool,
}

/// Docker's host name of Docker Hub, where 3.0 files a name without one.
const DOCKER_HUB: &str = "docker.io";
/// ocipkg's, where 2.9.3 files a name without a `/`.
const DOCKER_HUB_29: &str = "registry-1.docker.io";

impl Reference {
    /// `text` as an image reference naming a tag or a digest; `None` when it
    /// is not one.
    pub fn parse(text: &str) -> Option<Reference> {
        let (rest, digest) = match text.rsplit_once('@') {
            Some((rest, digest)) => (rest, Some(digest)),
            None => (text, None),
        };
        if let Some(digest) = digest {
            let hex = digest.strip_prefix("sha256:")?;
            let lower_hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
            if hex.len() != 64 || !hex.chars().all(lower_hex) {
                return None;
            }
        }
        // A tag follows the last ':' after the last '/' (a port's ':' comes
        // before a '/').
        let slash = rest.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match rest[slash..].rfind(':') {
            Some(i) => (&rest[..slash + i], Some(&rest[slash + i + 1..])),
            None => (rest, None),
        };
        if let Some(tag) = tag {
            if !valid_tag(tag) {
                return None;
            }
        }
        if !valid_name(name) {
            return None;
        }
        let (reference, is_digest) = match (digest, tag) {
            (Some(digest), _) => (digest, true),
            (None, Some(tag)) => (tag, false),
            (None, None) => return None,
        };
        Some(Reference {
            given: text.to_string(),
            name: name.to_string(),
            reference: reference.to_string(),
            is_digest,
        })
    }

    /// The image's directory under the root of OMMX 2.9.3's registry.
    pub fn path29(&self) -> PathBuf {
        let (host, name) = self.split29();
        let host = host.replacen(':', "__", 1);
        let tag = self.reference.replace(':', "__");
        PathBuf::from(host).join(name).join(format!("__{tag}"))
    }

    /// The image's name as OMMX 2.9.3 shows it.
    pub fn name29(&self) -> String {
        let (host, name) = self.split29();
        format!("{host}/{name}:{}", self.reference)
    }

    fn split29(&self) -> (&str, &str) {
        self.name
            .split_once('/')
            .unwrap_or((DOCKER_HUB_29, &self.name))
    }

    /// The repository and reference (tag or digest) OMMX 3.0's index files
    /// the image under.
    pub fn key30(&self) -> (String, &str) {
        let (first, rest) = self.name.split_once('/').unwrap_or(("", &self.name));
        let is_host = first.contains(['.', ':'])
            || first == "localhost"
            || first.chars().any(|c| c.is_ascii_uppercase());
        let repository = match (first, is_host) {
            ("", _) => format!("{DOCKER_HUB}/library/{rest}"),
            (_, true) => self.name.clone(),
            (_, false) => format!("{DOCKER_HUB}/{}", self.name),
        };
        (repository, &self.reference)
    }

    /// The image's name as OMMX 3.0 shows it.
    pub fn name30(&self) -> String {
        let (repository, reference) = self.key30();
        let separator = if self.is_digest { '@' } else { ':' };
        format!("{repository}{separator}{reference}")
    }

    /// The digest the reference names, if it names one.
    pub fn digest(&self) -> Option<&str> {
        self.is_digest.then_some(self.reference.as_str())
    }
}

/// A tag: `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn valid_tag(tag: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    tag.len() <= 128
        && tag.chars().next().is_some_and(word)
        && tag.chars().all(|c| word(c) || c == '.' || c == '-')
}

/// A name: an optional registry host (`host[:port]`) and path components of
/// lower-case letters and digits joined by `.`, `_`, `__` or dashes.
fn valid_name(name: &str) -> bool {
    if name.is_empty() || name.len() > 255 {
        return false;
    }
    let mut parts = name.split('/');
    let first = parts.next().unwrap_or_default();
    let rest: Vec<&str> = parts.collect();
    let first_ok = match rest.is_empty() {
        true => valid_component(first),
        false => valid_component(first) || valid_host(first),
    };
    first_ok && rest.iter().all(|c| valid_component(c))
}

fn valid_component(part: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let bytes: Vec<char> = part.chars().collect();
    if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return false;
    }
    // Separators: one '.', one or two '_', or any run of '-'.
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let separator: String = bytes[start..i].iter().collect();
        let fine =
            matches!(separator.as_str(), "." | "_" | "__") || separator.chars().all(|c| c == '-');
        if !fine {
            return false;
        }
    }
    true
}

fn valid_host(host: &str) -> bool {
    let (name, port) = match host.split_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    };
    let label = |l: &str| {
        !l.is_empty()
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    name.split('.').all(label)
        && port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.parse::<u16>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Reference {
        Reference::parse(text).unwrap_or_else(|| panic!("{text} should parse"))
    }

    #[test]
    fn keys_of_both_layouts() {
        let r = parsed("ghcr.io/jij-inc/ommx/random_lp_instance:4303c7f");
        assert_eq!(
            r.path29(),
            PathBuf::from("ghcr.io/jij-inc/ommx/random_lp_instance/__4303c7f")
        );
        assert_eq!(
            r.key30(),
            (
                "ghcr.io/jij-inc/ommx/random_lp_instance".to_string(),
                "4303c7f"
            )
        );
        let r = parsed("localhost:5000/test/y:latest");
        assert_eq!(r.path29(), PathBuf::from("localhost__5000/test/y/__latest"));
        assert_eq!(r.name29(), "localhost:5000/test/y:latest");
        assert_eq!(r.name30(), "localhost:5000/test/y:latest");
        // Docker Hub names: each OMMX its own way (both measured).
        let r = parsed("ubuntu:20.04");
        assert_eq!(
            r.path29(),
            PathBuf::from("registry-1.docker.io/ubuntu/__20.04")
        );
        assert_eq!(r.name30(), "docker.io/library/ubuntu:20.04");
        let r = parsed("test/noreg:v2");
        assert_eq!(r.path29(), PathBuf::from("test/noreg/__v2"));
        assert_eq!(r.name30(), "docker.io/test/noreg:v2");
    }

    #[test]
    fn digests() {
        let hex = "a".repeat(64);
        let r = parsed(&format!("ghcr.io/test/z@sha256:{hex}"));
        assert_eq!(r.digest(), Some(format!("sha256:{hex}").as_str()));
        assert_eq!(
            r.path29(),
            PathBuf::from(format!("ghcr.io/test/z/__sha256__{hex}"))
        );
        assert_eq!(r.name30(), format!("ghcr.io/test/z@sha256:{hex}"));
        assert!(Reference::parse("ghcr.io/test/z@sha256:abc").is_none());
        assert!(Reference::parse(&format!("x@md5:{hex}")).is_none());
    }

    #[test]
    fn what_is_not_a_reference() {
        for text in [
            "problem.ommx",
            "fixtures/oracle/moderate.pb",
            "ghcr.io/test/x",
            "x/Upper:v1",
            "a//b:v1",
            "x:",
            "x:-tag",
            "/abs/path:v1",
            "./x:v1",
            "dir\\x:v1",
            "-",
        ] {
            assert!(Reference::parse(text).is_none(), "{text}");
        }
        for text in [
            "x:v1",
            "a.b/c__d/e-f:1.0_rc-2",
            "localhost/x:v1",
            "Host.IO/x:v1",
        ] {
            parsed(text);
        }
    }
}

//! What an archive layer's annotations add to the instance OMMX 3.0 reads
//! from it. 3.0's `Artifact.get_instance` reads an instance layer (v1 or
//! v2) and then fills it from the layer's descriptor annotations, as
//! measured on 3.0.0b7 (fixtures/v2/differential.py, `archive` cases):
//!
//! - `org.ommx.v1.instance.title`, `.description`, `.created_by`, `.created`,
//!   `.license` and `.dataset` set the Description's `name`, `description`,
//!   `created_by`, `created`, `license` and `dataset` where the payload left
//!   them unset; `.authors` is a comma-separated list (each name trimmed,
//!   empty ones dropped) that sets the authors when the payload has none.
//!   Any of these keys gives the instance a Description, even with an empty
//!   value.
//! - Every other key under the reserved `org.ommx.v1.` prefix (such as
//!   `.variables` and `.constraints`, which writers add) is dropped.
//! - The rest join the instance's annotations, a payload's own value
//!   winning over the layer's for the same key.
//!
//! OMMX 2.9.3 reads the payload alone, so its accounting sees none of this.

use std::collections::BTreeMap;

use crate::ommx_v1::instance::Description;

use super::Instance;

/// The prefix of the annotation keys OMMX reserves for itself.
const RESERVED: &str = "org.ommx.v1.";
/// The prefix of the keys that describe an instance layer.
const INSTANCE: &str = "org.ommx.v1.instance.";

/// Folds a layer's `annotations` into `instance` as OMMX 3.0 does when it
/// reads the layer.
pub fn fold_layer_annotations(instance: &mut Instance, annotations: &BTreeMap<String, String>) {
    for (key, value) in annotations {
        match key.strip_prefix(INSTANCE) {
            Some(field) => describe(instance, field, value),
            None if key.starts_with(RESERVED) => {}
            None => {
                instance
                    .annotations
                    .entry(key.clone())
                    .or_insert_with(|| value.clone());
            }
        }
    }
}

/// The Description fields the `org.ommx.v1.instance.*` keys set.
const DESCRIBED: [&str; 7] = [
    "title",
    "description",
    "created_by",
    "created",
    "license",
    "dataset",
    "authors",
];

/// Sets the Description's `field` from an annotation's value, unless the
/// payload set it; a key that is no Description field is dropped.
fn describe(instance: &mut Instance, field: &str, value: &str) {
    if !DESCRIBED.contains(&field) {
        return;
    }
    let d = instance
        .description
        .get_or_insert_with(Description::default);
    let slot = match field {
        "title" => &mut d.name,
        "description" => &mut d.description,
        "created_by" => &mut d.created_by,
        "created" => &mut d.created,
        "license" => &mut d.license,
        "dataset" => &mut d.dataset,
        _ => {
            if d.authors.is_empty() {
                d.authors = value
                    .split(',')
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                    .map(str::to_string)
                    .collect();
            }
            return;
        }
    };
    slot.get_or_insert_with(|| value.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(payload: Instance, annotations: &[(&str, &str)]) -> Instance {
        let mut instance = payload;
        let annotations = annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        fold_layer_annotations(&mut instance, &annotations);
        instance
    }

    #[test]
    fn a_title_gives_an_instance_without_one_its_description() {
        let got = folded(Instance::default(), &[("org.ommx.v1.instance.title", "t")]);
        let d = got.description.expect("a description");
        assert_eq!(d.name.as_deref(), Some("t"));
        assert!(d.authors.is_empty() && d.description.is_none());
    }

    #[test]
    fn the_payload_wins_and_the_layer_fills_what_it_left_unset() {
        let mut payload = Instance {
            description: Some(Description {
                name: Some("p".into()),
                authors: vec!["x".into()],
                ..Default::default()
            }),
            ..Instance::default()
        };
        payload.annotations.insert("k".into(), "v".into());
        let got = folded(
            payload,
            &[
                ("org.ommx.v1.instance.title", "t"),
                ("org.ommx.v1.instance.authors", "a,b"),
                ("org.ommx.v1.instance.license", "MIT"),
                ("k", "w"),
                ("z", "1"),
            ],
        );
        let d = got.description.unwrap();
        assert_eq!(d.name.as_deref(), Some("p"));
        assert_eq!(d.authors, ["x"]);
        assert_eq!(d.license.as_deref(), Some("MIT"));
        assert_eq!(got.annotations["k"], "v");
        assert_eq!(got.annotations["z"], "1");
    }

    #[test]
    fn authors_are_split_trimmed_and_reserved_keys_dropped() {
        let got = folded(
            Instance::default(),
            &[
                ("org.ommx.v1.instance.authors", " a ,, b "),
                ("org.ommx.v1.instance.variables", "3"),
                ("org.ommx.v1.solution.x", "1"),
                ("org.ommx.v2.instance.title", "kept"),
            ],
        );
        assert_eq!(got.description.unwrap().authors, ["a", "b"]);
        assert_eq!(
            got.annotations.keys().collect::<Vec<_>>(),
            ["org.ommx.v2.instance.title"]
        );
        // Counts and unknown instance keys alone make no description.
        let got = folded(
            Instance::default(),
            &[
                ("org.ommx.v1.instance.constraints", "1"),
                ("org.ommx.v1.instance.name", "n"),
            ],
        );
        assert!(got.description.is_none() && got.annotations.is_empty());
        // An empty value still makes one.
        let got = folded(Instance::default(), &[("org.ommx.v1.instance.authors", "")]);
        assert_eq!(got.description, Some(Description::default()));
    }
}

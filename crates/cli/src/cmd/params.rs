//! `acclab params [KIND]`: every parameter of a flow kind or queue discipline — its key, default,
//! allowed values and meaning — generated from the parameter struct itself (its JSON Schema,
//! doc comments included) and from the range checks its validation makes, so it cannot drift
//! from the code.

use anyhow::{bail, Result};
use serde_json::{json, Map, Value};

use acclab_core::config::{QueueConfig, SchemeConfig};
use acclab_core::params::ranges_checked_by;

/// One parameter, as the help shows it.
struct Param {
    key: String,
    default: String,
    allowed: String,
    meaning: String,
}

/// What the help says of a kind: its table ("flow kind" or "queue kind"), JSON Schema,
/// description, and the ranges the validation of its defaults checks.
type KindInfo = (&'static str, Value, Option<String>, Vec<(String, String)>);

/// The [`KindInfo`] of `kind`; `None` for no such kind.
fn kind_info(kind: &str) -> Option<KindInfo> {
    if SchemeConfig::KINDS.contains(&kind) {
        let ranges = defaults_ranges(kind, |v| {
            SchemeConfig::from_kind(kind, v).map(|c| move || drop(c.validate()))
        });
        let schema = SchemeConfig::schema(kind)?.to_value();
        Some(("flow kind", schema, SchemeConfig::about(kind), ranges))
    } else if QueueConfig::KINDS.contains(&kind) {
        let ranges = defaults_ranges(kind, |v| {
            QueueConfig::from_kind(kind, v).map(|c| move || drop(c.validate()))
        });
        let schema = QueueConfig::schema(kind)?.to_value();
        Some(("queue kind", schema, QueueConfig::about(kind), ranges))
    } else {
        None
    }
}

pub fn run(kind: Option<&str>, as_json: bool) -> Result<()> {
    let Some(kind) = kind else {
        list();
        return Ok(());
    };
    let Some((what, schema, about, ranges)) = kind_info(kind) else {
        bail!(
            "no flow or queue kind {kind:?}; flows: {}; queues: {}",
            SchemeConfig::KINDS.join(", "),
            QueueConfig::KINDS.join(", ")
        );
    };
    let params = describe(&schema, &ranges);
    if as_json {
        let rows: Vec<Value> = params
            .iter()
            .map(|p| json!({"key": p.key, "default": p.default, "allowed": p.allowed, "meaning": p.meaning}))
            .collect();
        let out = json!({"kind": kind, "about": about, "params": rows, "schema": schema});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!("{what} {kind:?}: {}", about.unwrap_or_default());
    if params.is_empty() {
        println!("\nno parameters");
    }
    let table = if what == "flow kind" {
        format!("[[flow]] kind = \"{kind}\", params = {{ ... }}")
    } else {
        format!("queue = {{ kind = \"{kind}\", ... }}")
    };
    println!("written as {table}\n");
    for p in &params {
        println!("{} = {}    allowed: {}", p.key, p.default, p.allowed);
        for line in wrap(&p.meaning, 92) {
            println!("    {line}");
        }
    }
    Ok(())
}

/// Every kind with what it is.
fn list() {
    println!("flow kinds ([[flow]] kind = \"...\", params = {{ ... }}):");
    for k in SchemeConfig::KINDS {
        println!("  {k:<10} {}", SchemeConfig::about(k).unwrap_or_default());
    }
    println!("\nqueue kinds (queue = {{ kind = \"...\", ... }}):");
    for k in QueueConfig::KINDS {
        println!("  {k:<10} {}", QueueConfig::about(k).unwrap_or_default());
    }
    println!("\n`acclab params KIND` lists a kind's parameters: default, allowed values, meaning.");
}

/// The ranges the validation of `kind`'s defaults checks. A kind with required keys (a queue's
/// `limit`, web's `users`) gets each filled with an ordinary value of its form first, so that
/// the validation runs through.
fn defaults_ranges<F, C>(kind: &str, build: F) -> Vec<(String, String)>
where
    F: Fn(Value) -> Result<C, serde_json::Error>,
    C: FnOnce(),
{
    let mut table = Map::new();
    for _ in 0..8 {
        match build(Value::Object(table.clone())) {
            Ok(check) => return ranges_checked_by(check),
            Err(e) => {
                let msg = e.to_string();
                let Some(field) = msg
                    .strip_prefix("missing field `")
                    .and_then(|m| m.split('`').next())
                else {
                    return Vec::new();
                };
                table.insert(field.to_string(), ordinary(kind, field));
            }
        }
    }
    Vec::new()
}

/// A value a required key commonly takes, for [`defaults_ranges`].
fn ordinary(kind: &str, key: &str) -> Value {
    match (kind, key) {
        ("red", "min_th") => json!("200pkt"),
        ("red", "max_th") => json!("600pkt"),
        (_, "limit") => json!("1000pkt"),
        (_, "rate") => json!("10Mbps"),
        (_, "classes") => json!([{ "name": "tcp" }]),
        _ => json!(1),
    }
}

/// The parameters of a schema, in the struct's order.
fn describe(schema: &Value, ranges: &[(String, String)]) -> Vec<Param> {
    let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
    let Some(props) = schema.get("properties").and_then(|p| p.as_object()) else {
        return Vec::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    props
        .iter()
        .map(|(key, p)| {
            let default = match p.get("default") {
                _ if required.contains(&key.as_str()) => "(required)".to_string(),
                None | Some(Value::Null) => "(none)".to_string(),
                Some(v) => toml_value(v),
            };
            let checked: Vec<&str> = ranges
                .iter()
                .filter(|(k, _)| k == key)
                .map(|(_, r)| r.as_str())
                .collect();
            let mut allowed = form(p, &defs);
            if let Some(r) = checked.first() {
                allowed = if allowed.is_empty() {
                    r.to_string()
                } else {
                    format!("{allowed}, in {r}")
                };
            }
            Param {
                key: key.clone(),
                default,
                allowed: if allowed.is_empty() {
                    "see meaning".into()
                } else {
                    allowed
                },
                meaning: p
                    .get("description")
                    .and_then(|d| d.as_str())
                    .unwrap_or("")
                    .replace('\n', " "),
            }
        })
        .collect()
}

/// What a property takes: its enum's values, its written form, or its JSON type.
fn form(p: &Value, defs: &Value) -> String {
    if let Some(f) = p.get("x-form").and_then(|f| f.as_str()) {
        return f.to_string();
    }
    if let Some(r) = p.get("$ref").and_then(|r| r.as_str()) {
        let name = r.rsplit('/').next().unwrap_or("");
        if let Some(d) = defs.get(name) {
            return form(d, defs);
        }
    }
    let mut values: Vec<String> = Vec::new();
    if let Some(e) = p.get("enum").and_then(|e| e.as_array()) {
        values.extend(e.iter().filter(|v| !v.is_null()).map(toml_value));
    }
    for alt in ["oneOf", "anyOf"] {
        if let Some(a) = p.get(alt).and_then(|a| a.as_array()) {
            for v in a {
                if let Some(c) = v.get("const") {
                    values.push(toml_value(c));
                } else if v.get("type").and_then(|t| t.as_str()) != Some("null") {
                    let f = form(v, defs);
                    if !f.is_empty() {
                        values.push(f);
                    }
                }
            }
        }
    }
    if !values.is_empty() {
        return values.join(" | ");
    }
    let types: Vec<&str> = match p.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(|t| t.as_str()).collect(),
        _ => vec![],
    };
    let t: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
    match t.as_slice() {
        ["boolean"] => "true | false".into(),
        ["integer"] => "an integer".into(),
        ["number"] => "a number".into(),
        ["array"] => "a list (see meaning)".into(),
        ["object"] => "a table (see meaning)".into(),
        _ => String::new(),
    }
}

/// A JSON value as it is written in a scenario file.
fn toml_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "(none)".into(),
        other => other.to_string(),
    }
}

/// `text` in lines of at most `width` characters, broken at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![];
    let mut line = String::new();
    for w in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params_of(kind: &str) -> Vec<Param> {
        let (_, schema, _, ranges) = kind_info(kind).unwrap();
        describe(&schema, &ranges)
    }

    #[test]
    fn every_kind_lists_its_keys_with_a_meaning() {
        let mut undocumented = vec![];
        for kind in SchemeConfig::KINDS.iter().chain(QueueConfig::KINDS) {
            let params = params_of(kind);
            for p in params.iter().filter(|p| p.meaning.is_empty()) {
                undocumented.push(format!("{kind}.{}", p.key));
            }
            assert!(
                SchemeConfig::about(kind)
                    .or_else(|| QueueConfig::about(kind))
                    .is_some_and(|a| !a.is_empty()),
                "{kind}"
            );
        }
        assert!(undocumented.is_empty(), "no doc comment: {undocumented:?}");
    }

    #[test]
    fn monaco_shows_defaults_ranges_and_choices() {
        let params = params_of("monaco");
        let get = |k: &str| params.iter().find(|p| p.key == k).unwrap();
        assert_eq!(get("policy").default, "\"acc-p\"");
        assert!(get("policy").allowed.contains("\"acc-aiad\""));
        assert!(
            get("weight").allowed.contains("(0, 1000000]"),
            "{}",
            get("weight").allowed
        );
        assert_eq!(get("expected_rate").default, "(none)");
        assert!(get("target").allowed.contains("a size"));
        // The web kind's required key is said to be required.
        let web = params_of("web");
        assert_eq!(
            web.iter().find(|p| p.key == "users").unwrap().default,
            "(required)"
        );
    }
}

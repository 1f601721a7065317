//! Whether arguments fit a tool's JSON Schema, as far as a call written as
//! text needs checking before it is taken for a call: required properties
//! present, no properties the schema shuts out, and each property of the
//! right type (and among its `enum`). Nested objects are checked the same
//! way; anything the schema does not say is accepted (the tool checks its
//! arguments again when it runs).

use serde_json::Value;

/// Whether `args` fit `schema`.
pub(crate) fn fits(schema: &Value, args: &Value) -> bool {
    if !type_fits(schema.get("type"), args) {
        return false;
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(args)
    {
        return false;
    }
    let Some(obj) = args.as_object() else {
        return match (args.as_array(), schema.get("items")) {
            (Some(items), Some(item_schema)) => items.iter().all(|i| fits(item_schema, i)),
            _ => true,
        };
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    if required.is_some_and(|r| r.iter().filter_map(Value::as_str).any(|k| !obj.contains_key(k))) {
        return false;
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    obj.iter().all(|(k, v)| match properties.and_then(|p| p.get(k)) {
        Some(s) => fits(s, v),
        None => !closed,
    })
}

/// Whether `v` is of the schema's `type` (a word or a list of words).
fn type_fits(ty: Option<&Value>, v: &Value) -> bool {
    match ty {
        None => true,
        Some(Value::String(t)) => is(t, v),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).any(|t| is(t, v)),
        Some(_) => true,
    }
}

fn is(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::fits;
    use serde_json::json;

    #[test]
    fn required_types_enums_and_closed_objects_are_checked() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "append": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "lines": {"type": "array", "items": {"type": "integer"}}
            },
            "required": ["path"],
            "additionalProperties": false
        });
        assert!(fits(&schema, &json!({"path": "a.txt"})));
        assert!(fits(
            &schema,
            &json!({"path": "a.txt", "append": true, "mode": "b", "lines": [1, 2]})
        ));
        assert!(!fits(&schema, &json!({})), "required");
        assert!(!fits(&schema, &json!({"path": 3})), "type");
        assert!(!fits(&schema, &json!({"path": "a", "mode": "c"})), "enum");
        assert!(!fits(&schema, &json!({"path": "a", "lines": ["x"]})), "items");
        assert!(!fits(&schema, &json!({"path": "a", "other": 1})), "closed");
        assert!(!fits(&schema, &json!(["a"])), "not an object");
        let open = json!({"type": "object", "properties": {"n": {"type": ["integer", "null"]}}});
        assert!(fits(&open, &json!({"n": null, "extra": "ok"})));
        assert!(!fits(&open, &json!({"n": 1.5})));
    }
}

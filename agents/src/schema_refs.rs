//! The schemas of config fields serde reads as raw JSON (component specs, optimizers,
//! schedules, adapters), as references into the definitions `config_schema` adds; named by
//! the fields' `#[schemars(schema_with)]`.

use schemars::{Schema, SchemaGenerator};

// Each of these stands for an `Option` field, where `null` means absent, as serde reads it.

/// `preprocessing_spec`: a list of component specs.
pub(crate) fn components(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"type": ["array", "null"], "items": {"$ref": "#/$defs/component"}})
}

/// An optimizer spec.
pub(crate) fn optimizer(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"anyOf": [{"$ref": "#/$defs/optimizer"}, {"type": "null"}]})
}

/// A schedule that must be given: a number or a time-dependent parameter.
pub(crate) fn schedule(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"$ref": "#/$defs/schedule"})
}

/// A schedule that may be left out.
pub(crate) fn optional_schedule(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"anyOf": [{"$ref": "#/$defs/schedule"}, {"type": "null"}]})
}

/// `policy_spec.action_adapter_spec`.
pub(crate) fn action_adapter(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"anyOf": [{"$ref": "#/$defs/action_adapter"}, {"type": "null"}]})
}

/// `memory_spec.frame_stack`: how stacked states split into frames.
pub(crate) fn frame_stack(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({
        "type": ["object", "null"],
        "properties": {"frames": {"type": "integer", "minimum": 0}, "group": {"type": "integer", "minimum": 0}},
        "required": ["frames", "group"],
        "additionalProperties": false
    })
}

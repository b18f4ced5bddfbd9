//! `kernel: NAME` at the top of an experiment: where every point runs.

use super::{plain_name, Checker};
use crate::spec::{ExperimentDef, SpecError, Value};

/// The variable a top-level `kernel:` becomes (the same one a `kernel` axis sets).
pub(crate) const KERNEL_VAR: &str = crate::spec::claim::KERNEL_AXIS;

/// `kernel:` names a kernel plainly, and not beside a `kernel` var or axis that would
/// say it twice.
pub(super) fn check_kernel_key(c: &Checker<'_>) -> Result<(), SpecError> {
    let Some(name) = &c.def.kernel else {
        return Ok(());
    };
    let pos = c.value_in_section("kernel", "kernel");
    if !plain_name(name) {
        return Err(c.fail(
            pos,
            format!("`kernel: {name}` is not a kernel name"),
            Some("write `host` or the name of an installed kernel (`fslab kernels list`), e.g. `kernel: uml-bookworm`".into()),
        ));
    }
    for (section, has) in [
        ("vars", c.def.vars.contains_key(KERNEL_VAR)),
        ("matrix", c.def.matrix.contains_key(KERNEL_VAR)),
    ] {
        if has {
            return Err(c.fail(
                pos,
                format!("`kernel: {name}` and `{section}:` both name the kernel"),
                Some(format!(
                    "keep one: `kernel: {name}` runs every point on it; a `kernel` {} chooses per point",
                    if section == "matrix" { "axis" } else { "variable" }
                )),
            ));
        }
    }
    Ok(())
}

/// The checked `kernel:` as the `kernel` variable, first among the vars.
pub(crate) fn desugar(def: &mut ExperimentDef) {
    if let Some(name) = def.kernel.take() {
        def.vars
            .shift_insert(0, KERNEL_VAR.to_string(), Value::Str(name));
    }
}

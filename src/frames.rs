//! Typed records → polars DataFrames.
//!
//! Every record type in fslab (runs, parsed tool output, extents, statistics) derives
//! `serde::Serialize`; [`from_records`] turns a slice of them into a DataFrame whose
//! columns follow the struct's field order. Column types are inferred from the values:
//! all-bool → Boolean, all-integer → Int64 (UInt64 when a value exceeds i64), any
//! float → Float64, anything else → String (nested values as JSON text). `None`
//! becomes null. Fields marked `#[serde(flatten)]` become columns of their own.

use polars::prelude::*;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("record {index} is not a struct or map (serialized as {kind})")]
    NotAnObject { index: usize, kind: &'static str },
    #[error("cannot serialize record {index}: {source}")]
    Serialize {
        index: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error(transparent)]
    Polars(#[from] PolarsError),
}

/// A column that cannot be read as wanted.
#[derive(Debug, thiserror::Error)]
pub enum ColumnError {
    #[error("the {frame} frame has no column `{column}` (columns: {available})")]
    Missing {
        frame: &'static str,
        column: String,
        available: String,
    },
    #[error("column `{column}` of type {dtype} cannot be read as {wanted}")]
    Type {
        column: String,
        dtype: String,
        wanted: &'static str,
    },
    #[error(transparent)]
    Polars(#[from] PolarsError),
}

/// A column by name; `frame` names the frame in the error.
pub fn column<'a>(
    df: &'a DataFrame,
    frame: &'static str,
    name: &str,
) -> Result<&'a Column, ColumnError> {
    // By name, and by a scan of the columns when the name lookup does not answer: in a
    // notebook (evcxr, where every cell is built as its own library), a frame made in one
    // cell and looked up by name in a later one reported a column it has as missing
    // (notebooks/fio.ipynb, polars 0.55), while columns() still held it.
    df.column(name)
        .ok()
        .or_else(|| df.columns().iter().find(|c| c.name().as_str() == name))
        .ok_or_else(|| ColumnError::Missing {
            frame,
            column: name.to_string(),
            available: df
                .get_column_names()
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// A column's values as f64 (integers and booleans are cast; strings are an error).
pub fn f64_values(
    df: &DataFrame,
    frame: &'static str,
    name: &str,
) -> Result<Vec<Option<f64>>, ColumnError> {
    let col = column(df, frame, name)?;
    let type_error = || ColumnError::Type {
        column: name.to_string(),
        dtype: col.dtype().to_string(),
        wanted: "a number",
    };
    if !(col.dtype().is_primitive_numeric() || col.dtype().is_bool() || col.dtype().is_null()) {
        return Err(type_error());
    }
    let cast = col.cast(&DataType::Float64).map_err(|_| type_error())?;
    let ca = cast.f64().map_err(|_| type_error())?;
    Ok(ca.iter().collect())
}

/// A column's values as i64 (floats are truncated by the cast).
pub fn i64_values(
    df: &DataFrame,
    frame: &'static str,
    name: &str,
) -> Result<Vec<Option<i64>>, ColumnError> {
    let col = column(df, frame, name)?;
    let type_error = || ColumnError::Type {
        column: name.to_string(),
        dtype: col.dtype().to_string(),
        wanted: "an integer",
    };
    if !(col.dtype().is_primitive_numeric() || col.dtype().is_null()) {
        return Err(type_error());
    }
    let cast = col.cast(&DataType::Int64).map_err(|_| type_error())?;
    let ca = cast.i64().map_err(|_| type_error())?;
    Ok(ca.iter().collect())
}

/// A column's values as text (any type is rendered as polars casts it to String).
pub fn str_values(
    df: &DataFrame,
    frame: &'static str,
    name: &str,
) -> Result<Vec<Option<String>>, ColumnError> {
    let col = column(df, frame, name)?;
    let cast = col.cast(&DataType::String).map_err(|_| ColumnError::Type {
        column: name.to_string(),
        dtype: col.dtype().to_string(),
        wanted: "text",
    })?;
    let ca = cast.str()?;
    Ok(ca.iter().map(|v| v.map(str::to_string)).collect())
}

/// Build a DataFrame from serializable records (one row each).
pub fn from_records<T: Serialize>(rows: &[T]) -> Result<DataFrame, FrameError> {
    let mut objects = Vec::with_capacity(rows.len());
    for (index, row) in rows.iter().enumerate() {
        match serde_json::to_value(row).map_err(|source| FrameError::Serialize { index, source })? {
            Value::Object(map) => objects.push(map),
            other => {
                return Err(FrameError::NotAnObject {
                    index,
                    kind: kind_name(&other),
                })
            }
        }
    }
    from_objects(&objects)
}

/// Build a DataFrame from JSON objects (one row each); see the module docs for typing.
pub fn from_objects(objects: &[serde_json::Map<String, Value>]) -> Result<DataFrame, FrameError> {
    let mut names: Vec<&str> = Vec::new();
    for obj in objects {
        for key in obj.keys() {
            if !names.contains(&key.as_str()) {
                names.push(key.as_str());
            }
        }
    }
    let columns = names
        .iter()
        .map(|name| {
            let values: Vec<&Value> = objects
                .iter()
                .map(|o| o.get(*name).unwrap_or(&Value::Null))
                .collect();
            column_from_values(name, &values)
        })
        .collect::<Vec<_>>();
    Ok(DataFrame::new_infer_height(columns)?)
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn column_from_values(name: &str, values: &[&Value]) -> Column {
    let non_null = || values.iter().filter(|v| !v.is_null());
    let name = PlSmallStr::from(name);
    if non_null().count() > 0 && non_null().all(|v| v.is_boolean()) {
        let data: Vec<Option<bool>> = values.iter().map(|v| v.as_bool()).collect();
        return Column::new(name, data);
    }
    if non_null().count() > 0 && non_null().all(|v| v.is_i64()) {
        let data: Vec<Option<i64>> = values.iter().map(|v| v.as_i64()).collect();
        return Column::new(name, data);
    }
    if non_null().count() > 0 && non_null().all(|v| v.is_u64()) {
        let data: Vec<Option<u64>> = values.iter().map(|v| v.as_u64()).collect();
        return Column::new(name, data);
    }
    if non_null().count() > 0 && non_null().all(|v| v.is_number()) {
        let data: Vec<Option<f64>> = values.iter().map(|v| v.as_f64()).collect();
        return Column::new(name, data);
    }
    if non_null().count() == 0 {
        // All null: a String column of nulls keeps the schema stable for concatenation.
        let data: Vec<Option<&str>> = vec![None; values.len()];
        return Column::new(name, data);
    }
    let data: Vec<Option<String>> = values
        .iter()
        .map(|v| match v {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        })
        .collect();
    Column::new(name, data)
}

/// Vertically concatenate frames whose columns may differ: missing columns become null.
pub fn concat_diagonal(frames: &[DataFrame]) -> Result<DataFrame, FrameError> {
    let mut names: Vec<PlSmallStr> = Vec::new();
    let mut dtypes: Vec<DataType> = Vec::new();
    for df in frames {
        for col in df.columns() {
            if !names.contains(col.name()) {
                names.push(col.name().clone());
                dtypes.push(col.dtype().clone());
            }
        }
    }
    let mut out: Option<DataFrame> = None;
    for df in frames {
        let aligned = align(df, &names, &dtypes)?;
        out = Some(match out {
            None => aligned,
            Some(mut acc) => {
                acc.vstack_mut(&aligned)?;
                acc
            }
        });
    }
    Ok(out.unwrap_or_default())
}

/// `df` with exactly the columns `names` (of types `dtypes`), as [`concat_diagonal`]
/// lines up each of its frames: a missing column is null, a column of another type is
/// cast (to text when that cast fails).
pub fn align(df: &DataFrame, names: &[PlSmallStr], dtypes: &[DataType]) -> PolarsResult<DataFrame> {
    let height = df.height();
    let cols = names
        .iter()
        .zip(dtypes)
        .map(|(n, dt)| match df.column(n) {
            Ok(c) if c.dtype() == dt => Ok(c.clone()),
            Ok(c) => c.cast(dt).or_else(|_| c.cast(&DataType::String)),
            Err(_) => Ok(Column::full_null(n.clone(), height, dt)),
        })
        .collect::<PolarsResult<Vec<_>>>()?;
    DataFrame::new(height, cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Row {
        point: String,
        iteration: u32,
        wall_s: f64,
        note: Option<String>,
        ok: bool,
    }

    #[test]
    fn records_become_typed_columns_in_field_order() {
        let rows = vec![
            Row {
                point: "fs=ext4".into(),
                iteration: 0,
                wall_s: 1.5,
                note: None,
                ok: true,
            },
            Row {
                point: "fs=xfs".into(),
                iteration: 1,
                wall_s: 2.0,
                note: Some("x".into()),
                ok: false,
            },
        ];
        let df = from_records(&rows).unwrap();
        let names: Vec<&str> = df.get_column_names().iter().map(|s| s.as_str()).collect();
        assert_eq!(names, ["point", "iteration", "wall_s", "note", "ok"]);
        assert_eq!(df.column("iteration").unwrap().dtype(), &DataType::Int64);
        assert_eq!(df.column("wall_s").unwrap().dtype(), &DataType::Float64);
        assert_eq!(df.column("ok").unwrap().dtype(), &DataType::Boolean);
        assert_eq!(df.column("note").unwrap().null_count(), 1);
        assert_eq!(
            df.column("wall_s").unwrap().f64().unwrap().get(1),
            Some(2.0)
        );
    }

    #[test]
    fn diagonal_concat_fills_missing_columns_with_null() {
        let a = df!("x" => [1i64, 2], "y" => ["a", "b"]).unwrap();
        let b = df!("x" => [3i64], "z" => [true]).unwrap();
        let c = concat_diagonal(&[a, b]).unwrap();
        assert_eq!(c.shape(), (3, 3));
        assert_eq!(c.column("z").unwrap().null_count(), 2);
        assert_eq!(c.column("y").unwrap().null_count(), 1);
    }
}

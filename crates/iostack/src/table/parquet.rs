//! Parquet tables, written with the `parquet` crate's column writers (no Arrow): one row group,
//! every column optional. A column's type is the narrowest that holds all its cells: INT64 for
//! integers, DOUBLE when any cell is fractional, BOOLEAN for booleans, UTF-8 strings otherwise
//! (a column mixing numbers and text is text). Unsigned integers above 2^63 - 1 do not occur in
//! results (counts and nanoseconds); they would be written as DOUBLE. ZSTD-compressed.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::SerializedFileReader;
use parquet::file::writer::SerializedFileWriter;
use parquet::record::Field;
use parquet::schema::types::Type;
use serde_json::Value;

use super::{cell_text, columns, Row};

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Int,
    Double,
    Bool,
    Text,
}

fn kind_of(values: &[Option<&Value>]) -> Kind {
    let mut kind: Option<Kind> = None;
    for v in values.iter().flatten() {
        let k = match v {
            Value::Null => continue,
            Value::Bool(_) => Kind::Bool,
            Value::Number(n) if n.is_i64() => Kind::Int,
            Value::Number(_) => Kind::Double,
            _ => Kind::Text,
        };
        kind = Some(match (kind, k) {
            (None, k) => k,
            (Some(a), b) if a == b => a,
            (Some(Kind::Int), Kind::Double) | (Some(Kind::Double), Kind::Int) => Kind::Double,
            _ => Kind::Text,
        });
    }
    kind.unwrap_or(Kind::Text)
}

fn err(e: parquet::errors::ParquetError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

pub fn write(file: File, rows: &[Row]) -> std::io::Result<()> {
    let cols = columns(rows);
    let cells: Vec<Vec<Option<&Value>>> = cols.iter().map(|c| rows.iter().map(|r| r.get(c).filter(|v| !v.is_null())).collect()).collect();
    let kinds: Vec<Kind> = cells.iter().map(|c| kind_of(c)).collect();
    let fields = cols
        .iter()
        .zip(&kinds)
        .map(|(name, kind)| {
            let b = match kind {
                Kind::Int => Type::primitive_type_builder(name, Physical::INT64),
                Kind::Double => Type::primitive_type_builder(name, Physical::DOUBLE),
                Kind::Bool => Type::primitive_type_builder(name, Physical::BOOLEAN),
                Kind::Text => Type::primitive_type_builder(name, Physical::BYTE_ARRAY).with_logical_type(Some(LogicalType::String)),
            };
            b.with_repetition(Repetition::OPTIONAL).build().map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    let schema = Arc::new(Type::group_type_builder("schema").with_fields(fields).build().map_err(err)?);
    let props = Arc::new(WriterProperties::builder().set_compression(Compression::ZSTD(ZstdLevel::default())).build());
    let mut writer = SerializedFileWriter::new(file, schema, props).map_err(err)?;
    let mut group = writer.next_row_group().map_err(err)?;
    let mut i = 0;
    while let Some(mut col) = group.next_column().map_err(err)? {
        let values = &cells[i];
        let defs: Vec<i16> = values.iter().map(|v| v.is_some() as i16).collect();
        let present = values.iter().flatten();
        match kinds[i] {
            Kind::Int => {
                let v: Vec<i64> = present.map(|v| v.as_i64().unwrap_or_default()).collect();
                col.typed::<Int64Type>().write_batch(&v, Some(&defs), None)
            }
            Kind::Double => {
                let v: Vec<f64> = present.map(|v| v.as_f64().unwrap_or(f64::NAN)).collect();
                col.typed::<DoubleType>().write_batch(&v, Some(&defs), None)
            }
            Kind::Bool => {
                let v: Vec<bool> = present.map(|v| v.as_bool().unwrap_or_default()).collect();
                col.typed::<BoolType>().write_batch(&v, Some(&defs), None)
            }
            Kind::Text => {
                let v: Vec<ByteArray> = present.map(|v| ByteArray::from(cell_text(v).as_str())).collect();
                col.typed::<ByteArrayType>().write_batch(&v, Some(&defs), None)
            }
        }
        .map_err(err)?;
        col.close().map_err(err)?;
        i += 1;
    }
    group.close().map_err(err)?;
    writer.close().map_err(err)?;
    Ok(())
}

pub fn read(path: &Path) -> std::io::Result<Vec<Row>> {
    let file = File::open(path)?;
    let reader = SerializedFileReader::new(file).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {e}", path.display())))?;
    let mut rows = Vec::with_capacity(reader.metadata().file_metadata().num_rows() as usize);
    for r in reader.into_iter() {
        let r = r.map_err(err)?;
        let mut row = Row::new();
        for (name, f) in r.get_column_iter() {
            let v = match f {
                Field::Null => continue,
                Field::Bool(b) => Value::from(*b),
                Field::Long(n) => Value::from(*n),
                Field::Int(n) => Value::from(*n),
                Field::ULong(n) => Value::from(*n),
                Field::Double(x) => Value::from(*x),
                Field::Float(x) => Value::from(*x as f64),
                Field::Str(s) => Value::from(s.clone()),
                other => Value::from(other.to_string()),
            };
            row.cells.push((name.clone(), v));
        }
        rows.push(row);
    }
    Ok(rows)
}

//! Results as text that reads back bit for bit. serde_json writes every double exactly (the
//! shortest form that reads back), but its default reader is only "best effort" and can be one
//! unit in the last place off. A result crosses the network and sits in the journal as text,
//! and a restarted campaign must equal an uninterrupted one byte for byte, so every double of
//! a result is carried as its 64 bits instead: `{"$f64": "3ff0000000000000"}`. Keys of the
//! value's own objects that start with `$` are escaped with one more `$`, so nothing a result
//! holds can be mistaken for a double.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value};

const TAG: &str = "$f64";

/// `value` as text whose doubles read back exactly with [`from_exact_str`].
pub fn to_exact_string<T: Serialize>(value: &T) -> Result<String, serde_json::Error> {
    let v = serde_json::to_value(value)?;
    serde_json::to_string(&encode(v))
}

/// Reads text written by [`to_exact_string`].
pub fn from_exact_str<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    let v: Value = serde_json::from_str(text)?;
    serde_json::from_value(decode(v).map_err(serde::de::Error::custom)?)
}

fn encode(v: Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => {
            let bits = n.as_f64().unwrap_or(f64::NAN).to_bits();
            let mut m = Map::new();
            m.insert(TAG.to_owned(), Value::String(format!("{bits:016x}")));
            Value::Object(m)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(encode).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| {
                    let k = if k.starts_with('$') {
                        format!("${k}")
                    } else {
                        k
                    };
                    (k, encode(v))
                })
                .collect(),
        ),
        other => other,
    }
}

fn decode(v: Value) -> Result<Value, String> {
    match v {
        Value::Object(o) if o.len() == 1 && o.contains_key(TAG) => {
            let hex = o.get(TAG).and_then(Value::as_str).unwrap_or("");
            let bits = u64::from_str_radix(hex, 16).map_err(|_| format!("bad double '{hex}'"))?;
            // A double that JSON cannot hold (NaN, infinity) comes back as null, as serde_json
            // writes it.
            Ok(Number::from_f64(f64::from_bits(bits)).map_or(Value::Null, Value::Number))
        }
        Value::Array(a) => Ok(Value::Array(
            a.into_iter().map(decode).collect::<Result<_, _>>()?,
        )),
        Value::Object(o) => Ok(Value::Object(
            o.into_iter()
                .map(|(k, v)| {
                    let k = match k.strip_prefix('$') {
                        Some(rest) if rest.starts_with('$') => rest.to_owned(),
                        Some(_) => return Err(format!("unexpected key '{k}'")),
                        None => k,
                    };
                    Ok((k, decode(v)?))
                })
                .collect::<Result<_, String>>()?,
        )),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Sample {
        xs: Vec<f64>,
        n: u64,
        i: i64,
        name: String,
        keys: BTreeMap<String, String>,
        maybe: Option<f64>,
    }

    #[test]
    fn every_double_reads_back_bit_for_bit() {
        // Doubles chosen to be hard for a fast decimal reader, and the awkward ones.
        let mut xs = vec![
            0.1,
            1.0 / 3.0,
            -2.2250738585072014e-308,
            5e-324,
            1.7976931348623157e308,
            9007199254740993.0,
            -0.0,
            2.0,
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f64::from_bits(state);
            if x.is_finite() {
                xs.push(x);
            }
        }
        let keys = BTreeMap::from([
            ("$f64".to_owned(), "3ff0000000000000".to_owned()),
            ("$$x".to_owned(), "y".to_owned()),
            ("irrep".to_owned(), "A1".to_owned()),
        ]);
        let s = Sample {
            xs,
            n: u64::MAX,
            i: -3,
            name: "{\"$f64\": \"0\"}".into(),
            keys,
            maybe: Some(0.3),
        };
        let text = to_exact_string(&s).unwrap();
        let back: Sample = from_exact_str(&text).unwrap();
        assert_eq!(back.keys, s.keys);
        assert_eq!(back.name, s.name);
        assert_eq!((back.n, back.i, back.maybe), (s.n, s.i, s.maybe));
        assert_eq!(back.xs.len(), s.xs.len());
        for (a, b) in back.xs.iter().zip(&s.xs) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        assert!(from_exact_str::<Sample>("{\"$bad\": 1}").is_err());
    }
}

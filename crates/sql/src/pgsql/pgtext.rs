//! Rendering PostgreSQL binary-format values as the text the server would print
//! (prepared statements receive binary results).

use std::io::Write as _;

use postgres::types::Type;

use crate::resultset::ResultSet;

/// Append `raw` (binary format of type `ty`, `None` = NULL) as text. Types without a
/// known binary layout are passed through unchanged.
pub(crate) fn push(rs: &mut ResultSet, ty: &Type, raw: Option<&[u8]>) {
    let Some(raw) = raw else {
        rs.push_cell(None);
        return;
    };
    rs.push_cell_with(|buf| render(buf, ty, raw));
}

fn be_i64(raw: &[u8]) -> Option<i64> {
    Some(i64::from_be_bytes(raw.get(..8)?.try_into().ok()?))
}

fn be_i32(raw: &[u8]) -> Option<i32> {
    Some(i32::from_be_bytes(raw.get(..4)?.try_into().ok()?))
}

fn be_i16(raw: &[u8]) -> Option<i16> {
    Some(i16::from_be_bytes(raw.get(..2)?.try_into().ok()?))
}

fn render(buf: &mut Vec<u8>, ty: &Type, raw: &[u8]) {
    let ok = match *ty {
        Type::BOOL => {
            buf.push(if raw.first() == Some(&1) { b't' } else { b'f' });
            Some(())
        }
        Type::INT2 => be_i16(raw).map(|v| {
            let _ = write!(buf, "{v}");
        }),
        Type::INT4 => be_i32(raw).map(|v| {
            let _ = write!(buf, "{v}");
        }),
        Type::OID => be_i32(raw).map(|v| {
            let _ = write!(buf, "{}", v as u32);
        }),
        Type::INT8 => be_i64(raw).map(|v| {
            let _ = write!(buf, "{v}");
        }),
        Type::FLOAT4 => be_i32(raw).map(|v| {
            let _ = write!(buf, "{}", f32::from_bits(v as u32));
        }),
        Type::FLOAT8 => be_i64(raw).map(|v| {
            let _ = write!(buf, "{}", f64::from_bits(v as u64));
        }),
        Type::NUMERIC => numeric(buf, raw),
        Type::DATE => be_i32(raw).map(|d| date(buf, i64::from(d))),
        Type::TIME => be_i64(raw).map(|us| time(buf, us)),
        Type::TIMESTAMP => be_i64(raw).map(|us| timestamp(buf, us)),
        Type::TIMESTAMPTZ => be_i64(raw).map(|us| {
            timestamp(buf, us);
            buf.extend_from_slice(b"+00");
        }),
        Type::BYTEA => {
            buf.extend_from_slice(b"\\x");
            for b in raw {
                let _ = write!(buf, "{b:02x}");
            }
            Some(())
        }
        Type::UUID if raw.len() == 16 => {
            for (i, b) in raw.iter().enumerate() {
                if matches!(i, 4 | 6 | 8 | 10) {
                    buf.push(b'-');
                }
                let _ = write!(buf, "{b:02x}");
            }
            Some(())
        }
        Type::JSONB if raw.first() == Some(&1) => {
            buf.extend_from_slice(&raw[1..]);
            Some(())
        }
        _ => None,
    };
    if ok.is_none() {
        buf.extend_from_slice(raw);
    }
}

/// Days since 1970-01-01 to (year, month, day) (proleptic Gregorian).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// PostgreSQL epoch (2000-01-01) in days since 1970-01-01.
const PG_EPOCH_DAYS: i64 = 10_957;

fn date(buf: &mut Vec<u8>, pg_days: i64) {
    let (y, m, d) = civil(pg_days + PG_EPOCH_DAYS);
    let _ = write!(buf, "{y:04}-{m:02}-{d:02}");
}

fn time(buf: &mut Vec<u8>, us: i64) {
    let secs = us.div_euclid(1_000_000);
    let frac = us.rem_euclid(1_000_000);
    let _ = write!(
        buf,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    );
    if frac != 0 {
        let s = format!("{frac:06}");
        let _ = write!(buf, ".{}", s.trim_end_matches('0'));
    }
}

fn timestamp(buf: &mut Vec<u8>, us: i64) {
    if us == i64::MAX {
        buf.extend_from_slice(b"infinity");
        return;
    }
    if us == i64::MIN {
        buf.extend_from_slice(b"-infinity");
        return;
    }
    let day = us.div_euclid(86_400_000_000);
    date(buf, day);
    buf.push(b' ');
    time(buf, us.rem_euclid(86_400_000_000));
}

fn numeric(buf: &mut Vec<u8>, raw: &[u8]) -> Option<()> {
    let ndigits = usize::try_from(be_i16(raw)?).ok()?;
    let weight = be_i16(raw.get(2..)?)?;
    let sign = be_i16(raw.get(4..)?)? as u16;
    let dscale = usize::try_from(be_i16(raw.get(6..)?)?).ok()?;
    let digits: Vec<i16> = (0..ndigits)
        .map(|i| be_i16(raw.get(8 + 2 * i..)?))
        .collect::<Option<_>>()?;
    match sign {
        0xC000 => {
            buf.extend_from_slice(b"NaN");
            return Some(());
        }
        0xD000 => {
            buf.extend_from_slice(b"Infinity");
            return Some(());
        }
        0xF000 => {
            buf.extend_from_slice(b"-Infinity");
            return Some(());
        }
        0x4000 => buf.push(b'-'),
        _ => {}
    }
    let digit = |i: i64| -> i16 {
        usize::try_from(i)
            .ok()
            .and_then(|i| digits.get(i).copied())
            .unwrap_or(0)
    };
    if weight < 0 {
        buf.push(b'0');
    } else {
        for i in 0..=i64::from(weight) {
            if i == 0 {
                let _ = write!(buf, "{}", digit(i));
            } else {
                let _ = write!(buf, "{:04}", digit(i));
            }
        }
    }
    if dscale > 0 {
        buf.push(b'.');
        let mut frac = String::with_capacity(dscale + 4);
        let mut i = i64::from(weight) + 1;
        while frac.len() < dscale {
            let _ = std::fmt::Write::write_fmt(&mut frac, format_args!("{:04}", digit(i)));
            i += 1;
        }
        frac.truncate(dscale);
        buf.extend_from_slice(frac.as_bytes());
    }
    Some(())
}

/// The binary-value renderer over arbitrary bytes, for the fuzz targets and their
/// corpus replay: `data[0]` picks the type, the rest is the value.
pub(crate) fn fuzz_value(data: &[u8]) {
    const TYPES: [Type; 18] = [
        Type::BOOL,
        Type::INT2,
        Type::INT4,
        Type::OID,
        Type::INT8,
        Type::FLOAT4,
        Type::FLOAT8,
        Type::NUMERIC,
        Type::DATE,
        Type::TIME,
        Type::TIMESTAMP,
        Type::TIMESTAMPTZ,
        Type::BYTEA,
        Type::UUID,
        Type::JSONB,
        Type::TEXT,
        Type::BPCHAR,
        Type::VARCHAR,
    ];
    let Some((&t, raw)) = data.split_first() else {
        return;
    };
    let ty = &TYPES[usize::from(t) % TYPES.len()];
    let mut rs = ResultSet::new(vec!["v".into()]);
    push(&mut rs, ty, Some(raw));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(ty: &Type, raw: &[u8]) -> String {
        let mut b = Vec::new();
        render(&mut b, ty, raw);
        String::from_utf8(b).unwrap()
    }

    fn num(ndigits: i16, weight: i16, sign: u16, dscale: i16, d: &[i16]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&ndigits.to_be_bytes());
        v.extend_from_slice(&weight.to_be_bytes());
        v.extend_from_slice(&sign.to_be_bytes());
        v.extend_from_slice(&dscale.to_be_bytes());
        for x in d {
            v.extend_from_slice(&x.to_be_bytes());
        }
        v
    }

    #[test]
    fn numerics() {
        // 12345.678
        assert_eq!(
            text(&Type::NUMERIC, &num(3, 1, 0, 3, &[1, 2345, 6780])),
            "12345.678"
        );
        // -0.0001
        assert_eq!(
            text(&Type::NUMERIC, &num(1, -1, 0x4000, 4, &[1])),
            "-0.0001"
        );
        // 10000 (trailing zero digits omitted)
        assert_eq!(text(&Type::NUMERIC, &num(1, 1, 0, 0, &[1])), "10000");
        // 0.00
        assert_eq!(text(&Type::NUMERIC, &num(0, 0, 0, 2, &[])), "0.00");
    }

    #[test]
    fn temporals() {
        assert_eq!(text(&Type::DATE, &0i32.to_be_bytes()), "2000-01-01");
        assert_eq!(text(&Type::DATE, &(-1i32).to_be_bytes()), "1999-12-31");
        assert_eq!(text(&Type::DATE, &7365i32.to_be_bytes()), "2020-03-01");
        let us: i64 = (7365 * 86_400 + 3600 + 62) * 1_000_000 + 500_000;
        assert_eq!(
            text(&Type::TIMESTAMP, &us.to_be_bytes()),
            "2020-03-01 01:01:02.5"
        );
        assert_eq!(
            text(&Type::TIME, &(45_296_000_000i64).to_be_bytes()),
            "12:34:56"
        );
    }

    #[test]
    fn scalars() {
        assert_eq!(text(&Type::INT4, &(-7i32).to_be_bytes()), "-7");
        assert_eq!(text(&Type::BOOL, &[1]), "t");
        assert_eq!(text(&Type::FLOAT8, &1.5f64.to_bits().to_be_bytes()), "1.5");
        assert_eq!(text(&Type::TEXT, b"abc"), "abc");
        assert_eq!(text(&Type::BYTEA, &[0xde, 0xad]), "\\xdead");
    }
}

//! The cookie-date algorithm of RFC 6265 §5.1.1: how a user agent reads the
//! `Expires` attribute of a Set-Cookie field.
//!
//! Servers send dates in many shapes (RFC 1123 `Wed, 09 Jun 2021 10:18:14 GMT`,
//! RFC 850 `Thursday, 01-Jan-70 00:00:00 GMT`, asctime `Sun Nov  6 08:49:37 1994`,
//! one-digit days and hours, no weekday at all), so the RFC does not match
//! formats: it splits the value into tokens at delimiter bytes and finds a
//! time, a day of the month, a month and a year among them, in any order.
//! Anything else in the value (weekday, `GMT`, a zone name) is ignored.

use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time};

/// The earliest year a cookie date may name; an earlier one makes the whole
/// date invalid (RFC 6265 §5.1.1 step 5).
const MIN_YEAR: u32 = 1601;

/// Two-digit years from this one up to 99 are 19xx (§5.1.1 step 3).
const FIRST_1900S_TWO_DIGIT_YEAR: u32 = 70;

/// Two-digit years below [`FIRST_1900S_TWO_DIGIT_YEAR`] are 20xx (§5.1.1 step 4).
const CENTURY_2000: u32 = 2000;

/// The century added to the two-digit years of the 1900s (§5.1.1 step 3).
const CENTURY_1900: u32 = 1900;

/// Month names as the `month` production matches them: the first three
/// letters, case-insensitively, whatever follows (`Sept`, `JANUARY`).
const MONTHS: [(&[u8; 3], Month); 12] = [
    (b"jan", Month::January),
    (b"feb", Month::February),
    (b"mar", Month::March),
    (b"apr", Month::April),
    (b"may", Month::May),
    (b"jun", Month::June),
    (b"jul", Month::July),
    (b"aug", Month::August),
    (b"sep", Month::September),
    (b"oct", Month::October),
    (b"nov", Month::November),
    (b"dec", Month::December),
];

/// The `delimiter` production: `%x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`.
/// Digits, letters, `:` and every byte from `%x7F` up are token bytes.
fn is_delimiter(b: u8) -> bool {
    matches!(b, 0x09 | 0x20..=0x2F | 0x3B..=0x40 | 0x5B..=0x60 | 0x7B..=0x7E)
}

/// The value of `min..=max` leading digits of `token` when what follows them
/// is nothing or a non-digit (the `( non-digit *OCTET )` tail of the
/// day-of-month, year and time-field productions), and the rest after them.
fn leading_number(token: &[u8], min: usize, max: usize) -> Option<(u32, &[u8])> {
    let digits = token.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits < min || digits > max {
        return None; // more than `max` digits: the tail would start with a digit
    }
    let value = token[..digits]
        .iter()
        .fold(0, |n, d| n * 10 + u32::from(d - b'0'));
    Some((value, &token[digits..]))
}

/// The `time` production: `hms-time ( non-digit *OCTET )`, where `hms-time`
/// is three `1*2DIGIT` fields separated by `:`.
fn match_time(token: &[u8]) -> Option<(u32, u32, u32)> {
    let (hour, rest) = leading_number(token, 1, 2)?;
    let (minute, rest) = leading_number(rest.strip_prefix(b":")?, 1, 2)?;
    let (second, _) = leading_number(rest.strip_prefix(b":")?, 1, 2)?;
    Some((hour, minute, second))
}

/// The `month` production: a month's first three letters, then anything.
fn match_month(token: &[u8]) -> Option<Month> {
    let prefix = token.get(..3)?;
    MONTHS
        .iter()
        .find(|(name, _)| prefix.eq_ignore_ascii_case(&name[..]))
        .map(|&(_, month)| month)
}

/// The date an `Expires` attribute value names, in UTC, or `None` when it is
/// not a cookie date (a part missing or out of range, or a day that does not
/// exist in that month), in which case RFC 6265 §5.2.1 ignores the attribute.
pub(crate) fn parse_cookie_date(value: &str) -> Option<OffsetDateTime> {
    let mut time = None;
    let mut day = None;
    let mut month = None;
    let mut year = None;
    // §5.1.1 step 2: each token is tried as a time, a day of the month, a
    // month and a year, in that order, for the parts not found yet.
    for token in value.as_bytes().split(|&b| is_delimiter(b)) {
        if token.is_empty() {
            continue;
        }
        if time.is_none() {
            if let Some(found) = match_time(token) {
                time = Some(found);
                continue;
            }
        }
        if day.is_none() {
            if let Some((found, _)) = leading_number(token, 1, 2) {
                day = Some(found);
                continue;
            }
        }
        if month.is_none() {
            if let Some(found) = match_month(token) {
                month = Some(found);
                continue;
            }
        }
        if year.is_none() {
            if let Some((found, _)) = leading_number(token, 2, 4) {
                year = Some(found);
            }
        }
    }
    let (hour, minute, second) = time?;
    let (day, month, mut year) = (day?, month?, year?);
    // Steps 3 and 4: two-digit years (the value, however many digits spelled it).
    if (FIRST_1900S_TWO_DIGIT_YEAR..=99).contains(&year) {
        year += CENTURY_1900;
    } else if year < FIRST_1900S_TWO_DIGIT_YEAR {
        year += CENTURY_2000;
    }
    // Step 5: out-of-range parts make the date invalid.
    if !(1..=31).contains(&day) || year < MIN_YEAR || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    // Step 6: a day the month does not have (30 February) is invalid too.
    let date =
        Date::from_calendar_date(i32::try_from(year).ok()?, month, u8::try_from(day).ok()?).ok()?;
    let time = Time::from_hms(
        u8::try_from(hour).ok()?,
        u8::try_from(minute).ok()?,
        u8::try_from(second).ok()?,
    )
    .ok()?;
    Some(PrimitiveDateTime::new(date, time).assume_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(value, expected Unix time)`; `None`: not a cookie date.
    fn check(cases: &[(&str, Option<i64>)]) {
        for &(value, expected) in cases {
            let got = parse_cookie_date(value).map(OffsetDateTime::unix_timestamp);
            assert_eq!(got, expected, "{value:?}");
        }
    }

    #[test]
    fn formats_servers_send() {
        check(&[
            // RFC 1123 / RFC 7231 IMF-fixdate.
            ("Wed, 09 Jun 2021 10:18:14 GMT", Some(1_623_233_894)),
            ("Thu, 01 Jan 1970 00:00:00 GMT", Some(0)),
            // RFC 850, full weekday, two-digit and four-digit years.
            ("Thursday, 01-Jan-1970 00:00:00 GMT", Some(0)),
            ("Sunday, 06-Nov-94 08:49:37 GMT", Some(784_111_777)),
            // asctime, the day padded with a space.
            ("Sun Nov  6 08:49:37 1994", Some(784_111_777)),
            // One-digit day and time fields.
            ("Wed, 1 Jan 2031 00:00:00 GMT", Some(1_924_992_000)),
            ("Wed, 1 Jan 2031 1:2:3 GMT", Some(1_924_995_723)),
            // No weekday, no zone, lower case, other delimiters.
            ("09 jun 2021 10:18:14", Some(1_623_233_894)),
            ("09-JUN-2021 10:18:14 UTC", Some(1_623_233_894)),
            ("2021/jun/09 10:18:14", Some(1_623_233_894)), // "2021" is no day (1-2 digits): a year
            ("Wed, 09 June 2021 10:18:14 +0000", Some(1_623_233_894)),
        ]);
    }

    #[test]
    fn parts_in_any_order() {
        check(&[
            ("10:18:14 2021 Jun 09", Some(1_623_233_894)),
            ("Jun 09 10:18:14 2021", Some(1_623_233_894)),
            ("2021 10:18:14 9 jun", Some(1_623_233_894)),
            // The first 1-2 digit token is the day, the next 2-4 digit one the year.
            ("21 09 Jun 10:18:14", Some(1245579494)), // 21 June 2009
            ("9 2021 jun 10:18:14", Some(1_623_233_894)),
        ]);
    }

    #[test]
    fn two_digit_years() {
        let at = |year: i32| {
            Date::from_calendar_date(year, Month::January, 1)
                .unwrap()
                .midnight()
                .assume_utc()
                .unix_timestamp()
        };
        check(&[
            ("1 Jan 70 00:00:00", Some(at(1970))),
            ("1 Jan 99 00:00:00", Some(at(1999))),
            ("1 Jan 00 00:00:00", Some(at(2000))),
            ("1 Jan 69 00:00:00", Some(at(2069))),
            // The rule reads the value: "0070" is 70, so 1970.
            ("1 Jan 0070 00:00:00", Some(at(1970))),
            ("1 Jan 1601 00:00:00", Some(at(1601))),
            ("1 Jan 9999 00:00:00", Some(at(9999))),
        ]);
    }

    #[test]
    fn out_of_range_and_missing_parts() {
        check(&[
            ("1 Jan 1600 00:00:00", None),
            ("1 Jan 100 00:00:00", None),
            ("0 Jan 2021 00:00:00", None),
            ("32 Jan 2021 00:00:00", None),
            ("30 Feb 2021 00:00:00", None),
            ("29 Feb 2021 00:00:00", None),
            ("24 Jan 2021 24:00:00", None),
            ("24 Jan 2021 23:60:00", None),
            ("24 Jan 2021 23:59:60", None),
            ("Jan 2021 00:00:00", None),
            ("1 Jan 2021", None),
            ("1 2021 00:00:00", None),
            ("", None),
            ("garbage", None),
            ("0", None),
            ("-1", None),
            ("Wed, 09 Jun 20210 10:18:14 GMT", None), // five-digit year
            ("Wed, 09 Jun 2021 100:18:14 GMT", None), // three-digit hour
        ]);
    }

    #[test]
    fn token_tails() {
        check(&[
            // A time field followed by a non-digit tail ("14GMT") still matches.
            ("Wed, 09 Jun 2021 10:18:14GMT", Some(1_623_233_894)),
            ("Wed, 09th Jun 2021 10:18:14", Some(1_623_233_894)),
            ("Wed, 09 Jun 2021AD 10:18:14", Some(1_623_233_894)),
            // ':' is not a delimiter: "10:18:14:99" is a time with a tail.
            ("09 Jun 2021 10:18:14:99", Some(1_623_233_894)),
            // A third digit in a field: not a time, and nothing else either.
            ("09 Jun 2021 10:18:140", None),
            // Bytes from %x7F up are token bytes, not delimiters.
            ("09\u{e9}Jun 2021 10:18:14", None),
            // Tabs are delimiters.
            ("09\tJun\t2021\t10:18:14", Some(1_623_233_894)),
        ]);
    }
}

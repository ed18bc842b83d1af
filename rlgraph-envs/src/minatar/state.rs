//! Reading a game's state back from the numbers `Env::state` gives, each checked, so that a
//! state or snapshot from elsewhere is refused by name rather than stepped into a panic.

/// The bound of counters with no tighter one (ramp indexes, the diver count's fall below
/// zero): every integer to it is exact in an `f64`, and no run counts that far.
pub(crate) const COUNTER_MAX: i64 = 1 << 53;

use std::fmt::Display;

/// The numbers of a state, read front to back. Names are anything displayable, so that a
/// caller passes `format_args!` and no name is formatted unless a value is refused (the
/// tensor games' host pass reads thousands of states a second).
pub(crate) struct Reader<'a> {
    values: &'a [f64],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at `values[at]`, whose errors count positions from `values[0]`, so they name
    /// the place in the vector the caller gave.
    pub(crate) fn starting_at(values: &'a [f64], at: usize) -> Self {
        Reader { values, at }
    }

    fn next(&mut self, name: impl Display) -> Result<f64, String> {
        let x = self.values.get(self.at).copied().ok_or_else(|| {
            format!(
                "there are only {} values, none for {name}; is it of another version?",
                self.values.len()
            )
        })?;
        self.at += 1;
        Ok(x)
    }

    /// The next value, an integer from `low` to `high`.
    pub(crate) fn int(&mut self, name: impl Display + Copy, low: i64, high: i64) -> Result<i64, String> {
        let at = self.at;
        let x = self.next(name)?;
        if x.is_finite() && x.fract() == 0.0 && x >= low as f64 && x <= high as f64 {
            Ok(x as i64)
        } else {
            Err(format!(
                "{name} (value {at}) is {x}; expected an integer from {low} to {high}"
            ))
        }
    }

    /// The next value, 0 (false) or 1 (true).
    pub(crate) fn flag(&mut self, name: impl Display + Copy) -> Result<bool, String> {
        let at = self.at;
        let x = self.next(name)?;
        if x == 0.0 || x == 1.0 {
            Ok(x == 1.0)
        } else {
            Err(format!("{name} (value {at}) is {x}; expected 0 or 1"))
        }
    }

    /// The next value, the length of a list (`plural` names its elements) whose elements
    /// take `width` values each (no more than the values left hold).
    pub(crate) fn count(&mut self, plural: impl Display, width: usize) -> Result<usize, String> {
        let room = (self.values.len() - self.at.min(self.values.len())).saturating_sub(1) / width;
        Ok(self.int(format_args!("the number of {plural}"), 0, room as i64)? as usize)
    }

    /// The values not read yet.
    pub(crate) fn rest(&self) -> &'a [f64] {
        &self.values[self.at.min(self.values.len())..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_out_of_range_or_not_integers_are_named() {
        let mut r = Reader::starting_at(&[3.0, 10.0, 0.5, 2.0], 0);
        assert_eq!(r.int("x", 0, 9), Ok(3));
        assert_eq!(
            r.int("y", 0, 9).unwrap_err(),
            "y (value 1) is 10; expected an integer from 0 to 9"
        );
        assert!(r.int("z", 0, 9).unwrap_err().contains("is 0.5"));
        assert_eq!(r.flag("f").unwrap_err(), "f (value 3) is 2; expected 0 or 1");
        assert!(r
            .int("w", 0, 9)
            .unwrap_err()
            .contains("there are only 4 values, none for w"));
        assert!(Reader::starting_at(&[f64::NAN], 0).flag("f").is_err());
    }

    #[test]
    fn a_reader_started_later_names_places_in_the_whole_vector() {
        // The tag at 0 is read elsewhere; the 10 at place 2 is the caller's third value.
        let mut r = Reader::starting_at(&[1000.0, 3.0, 10.0], 1);
        assert_eq!(r.int("x", 0, 9), Ok(3));
        assert_eq!(
            r.int("y", 0, 9).unwrap_err(),
            "y (value 2) is 10; expected an integer from 0 to 9"
        );
    }

    #[test]
    fn a_count_cannot_promise_more_than_is_left() {
        // Two elements of width 2 fit in the four values after the count; three do not.
        assert_eq!(
            Reader::starting_at(&[2.0, 0.0, 0.0, 0.0, 0.0], 0).count("bullets", 2),
            Ok(2)
        );
        let e = Reader::starting_at(&[3.0, 0.0, 0.0, 0.0, 0.0], 0)
            .count("bullets", 2)
            .unwrap_err();
        assert!(e.contains("the number of bullets (value 0) is 3"), "{e}");
    }
}

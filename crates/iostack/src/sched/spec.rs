//! Specs of stack components (`name`, `name:k=v,k=v`, `name:V`): the name and typed access to
//! the parameters, rejecting any parameter the component did not take.

use crate::error::ConfigError;

/// A component name with its parameters, as written on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentSpec {
    /// The option it came from (`--sched`, `--prefetch`), for messages.
    pub option: String,
    pub name: String,
    pairs: Vec<(String, String, bool)>,
}

impl ComponentSpec {
    /// Parses `name`, `name:k=v,k=v` or `name:V[,k=v]`, where a bare `V` is the value of the
    /// component's main parameter (`positional` maps component names to that parameter).
    pub fn parse(option: &str, text: &str, positional: &[(&str, &str)]) -> Result<ComponentSpec, ConfigError> {
        let text = text.trim();
        let (name, rest) = match text.split_once(':') {
            Some((n, r)) => (n.trim().to_ascii_lowercase(), r),
            None => (text.to_ascii_lowercase(), ""),
        };
        if name.is_empty() {
            return Err(ConfigError::new(option, format!("`{text}` has no name")));
        }
        let mut pairs = Vec::new();
        for (i, kv) in rest.split(',').map(str::trim).filter(|s| !s.is_empty()).enumerate() {
            match kv.split_once('=') {
                Some((k, v)) => pairs.push((k.trim().to_ascii_lowercase(), v.trim().to_string(), false)),
                None => {
                    let key = positional.iter().find(|(n, _)| *n == name).map(|(_, k)| *k);
                    match (i, key) {
                        (0, Some(k)) => pairs.push((k.to_string(), kv.to_string(), false)),
                        _ => {
                            return Err(ConfigError::new(option, format!("parameter `{kv}` of `{text}` is not key=value")))
                        }
                    }
                }
            }
        }
        Ok(ComponentSpec { option: option.to_string(), name, pairs })
    }

    fn take(&mut self, key: &str) -> Option<String> {
        self.pairs.iter_mut().find(|(k, _, _)| k == key).map(|(_, v, used)| {
            *used = true;
            v.clone()
        })
    }

    fn err(&self, key: &str, msg: String) -> ConfigError {
        ConfigError::new(format!("{} {}.{key}", self.option, self.name), msg)
    }

    /// An error about parameter `key`, naming the option, component and parameter.
    pub fn error(&self, key: &str, msg: impl Into<String>) -> ConfigError {
        self.err(key, msg.into())
    }

    /// A parameter's text, lowercased, if given.
    pub fn text(&mut self, key: &str) -> Option<String> {
        self.take(key).map(|v| v.to_ascii_lowercase())
    }

    /// A whole-number parameter of at least `min`.
    pub fn u64(&mut self, key: &str, default: u64, min: u64) -> Result<u64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<u64>() {
                Ok(n) if n >= min => Ok(n),
                Ok(_) => Err(self.err(key, format!("`{v}` is below the minimum {min}"))),
                Err(_) => Err(self.err(key, format!("`{v}` is not a whole number"))),
            },
        }
    }

    /// A duration parameter with its unit (`500ms`, `5s`; a bare number is an error), in ns.
    pub fn duration_ns(&mut self, key: &str, default: u64) -> Result<u64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => crate::units::parse_duration_ns(&format!("{} {}.{key}", self.option, self.name), &v),
        }
    }

    /// A size parameter in bytes (`128KiB`; a plain number counts `unit` bytes).
    pub fn size_bytes(&mut self, key: &str, default: u64, unit: u64) -> Result<u64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => {
                let s = crate::units::Size::parse(&format!("{} {}.{key}", self.option, self.name), &v)?;
                Ok(match s {
                    crate::units::Size::Count(n) => n.saturating_mul(unit),
                    crate::units::Size::Bytes(b) => b,
                })
            }
        }
    }

    /// A parameter that must be one of `valid` (any case).
    pub fn choice(&mut self, key: &str, default: &'static str, valid: &[&'static str]) -> Result<&'static str, ConfigError> {
        let given = self.take(key);
        crate::cache::one_of(given, default, valid).map_err(|m| self.err(key, m))
    }

    /// Fails on any parameter that no getter took.
    pub fn finish(&self) -> Result<(), ConfigError> {
        if let Some((k, _, _)) = self.pairs.iter().find(|(_, _, used)| !used) {
            return Err(self.err(k, format!("unknown parameter of `{}`", self.name)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_positional_and_named() {
        let mut s = ComponentSpec::parse("--sched", "batch:8", &[("batch", "b")]).unwrap();
        assert_eq!(s.name, "batch");
        assert_eq!(s.u64("b", 16, 1).unwrap(), 8);
        s.finish().unwrap();
        let mut s = ComponentSpec::parse("--sched", "Deadline:read_expire=100ms", &[]).unwrap();
        assert_eq!(s.duration_ns("read_expire", 0).unwrap(), 100_000_000);
        // A duration without its unit names the option and the parameter.
        let mut s = ComponentSpec::parse("--sched", "cfq:slice_idle=8", &[]).unwrap();
        let e = s.duration_ns("slice_idle", 0).unwrap_err().to_string();
        assert!(e.contains("--sched cfq.slice_idle") && e.contains("unit"), "{e}");
        let s = ComponentSpec::parse("--sched", "cscan:x=1", &[]).unwrap();
        assert!(s.finish().unwrap_err().to_string().contains("x"));
        assert!(ComponentSpec::parse("--sched", "cscan:3", &[]).is_err());
    }
}

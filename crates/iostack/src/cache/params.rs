//! Policy specs (`name:key=value,key=value`) and typed access to their parameters.

use crate::error::ConfigError;

/// A policy name with its parameters, as written on the command line: `dulo:hits=gds,bank=4`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PolicySpec {
    pub name: String,
    pub params: Vec<(String, String)>,
}

impl PolicySpec {
    pub fn parse(text: &str) -> Result<PolicySpec, ConfigError> {
        let text = text.trim();
        let (name, rest) = match text.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (text, None),
        };
        if name.is_empty() {
            return Err(ConfigError::new("--policy", format!("`{text}` has no policy name")));
        }
        let mut params = Vec::new();
        if let Some(rest) = rest {
            for kv in rest.split(',').filter(|s| !s.is_empty()) {
                let (k, v) = kv.split_once('=').ok_or_else(|| {
                    ConfigError::new("--policy", format!("parameter `{kv}` of `{text}` is not key=value"))
                })?;
                params.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        Ok(PolicySpec { name: name.to_ascii_lowercase(), params })
    }

    /// The parameters, ready for a policy constructor to take them.
    pub fn params(&self, policy: &str) -> Params {
        Params { policy: policy.to_string(), pairs: self.params.iter().map(|(k, v)| (k.clone(), v.clone(), false)).collect() }
    }
}

impl std::fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name)?;
        for (i, (k, v)) in self.params.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

/// `given` if it is one of `valid` (any case, answered in `valid`'s spelling), `default` when
/// absent; else the message saying what is valid.
pub(crate) fn one_of(given: Option<String>, default: &'static str, valid: &[&'static str]) -> Result<&'static str, String> {
    match given {
        None => Ok(default),
        Some(v) => valid
            .iter()
            .find(|c| c.eq_ignore_ascii_case(&v))
            .copied()
            .ok_or_else(|| format!("`{v}` is not valid; valid: {}", valid.join(", "))),
    }
}

/// Parameters of one policy. Constructors take what they know with the typed getters; `finish`
/// then rejects any parameter nobody took, so a typo never passes silently.
#[derive(Debug, Clone)]
pub struct Params {
    policy: String,
    pairs: Vec<(String, String, bool)>,
}

impl Params {
    /// No parameters.
    pub fn empty(policy: &str) -> Params {
        Params { policy: policy.to_string(), pairs: Vec::new() }
    }

    fn take(&mut self, key: &str) -> Option<String> {
        self.pairs.iter_mut().find(|(k, _, _)| k == key).map(|(_, v, used)| {
            *used = true;
            v.clone()
        })
    }

    fn err(&self, key: &str, msg: String) -> ConfigError {
        ConfigError::new(format!("{}.{key}", self.policy), msg)
    }

    pub fn f64(&mut self, key: &str, default: f64) -> Result<f64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => {
                let v = v.trim_end_matches('%');
                v.parse::<f64>().map_err(|_| self.err(key, format!("`{v}` is not a number")))
            }
        }
    }

    pub fn u64(&mut self, key: &str, default: u64) -> Result<u64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v.parse::<u64>().map_err(|_| self.err(key, format!("`{v}` is not a whole number"))),
        }
    }

    /// A string parameter that must be one of `valid`.
    pub fn choice(&mut self, key: &str, default: &'static str, valid: &[&'static str]) -> Result<&'static str, ConfigError> {
        let given = self.take(key);
        one_of(given, default, valid).map_err(|m| self.err(key, m))
    }

    pub fn bool(&mut self, key: &str, default: bool) -> Result<bool, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" => Ok(false),
                _ => Err(self.err(key, format!("`{v}` is not a boolean"))),
            },
        }
    }

    /// Fails on any parameter that no getter took.
    pub fn finish(&self) -> Result<(), ConfigError> {
        if let Some((k, _, _)) = self.pairs.iter().find(|(_, _, used)| !used) {
            return Err(self.err(k, format!("unknown parameter of policy `{}`", self.policy)));
        }
        Ok(())
    }
}

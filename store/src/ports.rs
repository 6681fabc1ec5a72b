//! What the ports of dragnet-core see of a store failure: the store's
//! error whole, as the source of `dragnet_core::ports::Error::Store`, with
//! whether it is transient — never its message alone.

use crate::error::Error;

impl From<Error> for dragnet_core::ports::Error {
    fn from(e: Error) -> Self {
        let transient = e.is_transient();
        dragnet_core::ports::Error::store(e, transient)
    }
}

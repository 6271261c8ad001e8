"""The ledger branch's revision scripts."""

-- Spend counted against each agent's daily cap: its own calls plus those of
-- its bounded delegated descendants. The cost_ledger stays the per-agent
-- record of who actually spent (and the source of global totals).
CREATE TABLE cost_attribution (
    agent       TEXT NOT NULL,
    day         TEXT NOT NULL,
    cost_micros BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (agent, day)
);

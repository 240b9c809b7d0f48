"""`[Operations]`: where a process answers the questions a supervisor and a scraper ask of it
(is it alive, is it ready, what has it done), apart from any listener a caller reaches."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OperationsConfig:
    """`host` and `port`: the operations listener's address, None when the process starts
    none. A process numbered `index` among several started together (`serve --processes`)
    listens on `port + index`, so each one's metrics are scraped on a port of its own."""

    host: str | None = None
    port: int | None = None

    @property
    def listening(self) -> bool:
        return self.host is not None and self.port is not None

    def port_of(self, index: int) -> int:
        assert self.port is not None
        return self.port + index

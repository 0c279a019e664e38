module inflight

go 1.26

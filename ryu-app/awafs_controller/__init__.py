"""The AWAFS controller app: observes AWAFS switches over OpenFlow 1.3,
configures them through OVSDB and serves a REST API, Prometheus metrics
and a dashboard (ryu-app/README.md)."""

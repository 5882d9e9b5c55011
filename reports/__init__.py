"""agenthop-report: HTML reports and ad-hoc SQL over the dbt marts."""

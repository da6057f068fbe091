"""Nightly export under a latchkey lock. max_active_runs and pools count the runs of one Airflow
deployment; the lock also covers a second deployment (a migration, a standby scheduler, a staging
copy) and anything else that runs the export. A busy run exits 99, which BashOperator reports as
*skipped*, not failed, so it is neither retried nor alerted on. LATCHKEY_URI is in the workers'
environment.
"""
import pendulum
from airflow import DAG
from airflow.operators.bash import BashOperator

with DAG(
    dag_id="nightly_export",
    schedule="0 2 * * *",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
):
    BashOperator(
        task_id="export",
        bash_command="latchkey run --key nightly-export --ttl 2m --busy-exit 99 -- /opt/jobs/export",
        skip_on_exit_code=99,
    )

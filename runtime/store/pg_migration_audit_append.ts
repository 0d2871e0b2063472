/**
 * The shared store's migration for appending audit rows in one statement: one numbered step
 * of `PG_MIGRATIONS` (`pg_migrations.ts`), kept in its own file.
 *
 * An append used to be a transaction of its own (begin, set the tenant, lock the head, insert,
 * commit: four round trips before the action could run). `audit_append(tenant, rows)` is one
 * statement, committed on its own: it names the tenant for the statement's transaction, locks
 * the tenant's head, and inserts the rows only if the first continues that head (the runtime
 * chained them from the head it last saw); otherwise it inserts nothing and answers the head,
 * and the runtime chains again. Rows are built and hashed by the runtime as before; the
 * database still checks every link (`audit_link`) and refuses what a runtime may not write.
 * It runs with the caller's rights: row-level security and the bound logins (`app_tenant()`)
 * apply as to any insert.
 *
 * Replaced by a later step (`pg_migration_audit_chain.ts`): the database now places the rows
 * in the chain itself, so an append never misses. Kept as it was: a migration is history.
 *
 * @module
 */

/** The SQL of the step (run by the owner, in one transaction). */
export const AUDIT_APPEND_MIGRATION = `
  CREATE FUNCTION audit_append(p_tenant text, p_rows jsonb)
    RETURNS TABLE (appended boolean, head_seq bigint, head_hash text)
    LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $f$
  DECLARE
    h record;
    first_seq bigint := (p_rows -> 0 ->> 'seq')::bigint;
    first_prev text := p_rows -> 0 ->> 'prev_hash';
  BEGIN
    PERFORM set_config('app.tenant_id', p_tenant, true);
    SELECT l.head_seq, l.head_hash INTO h FROM public.audit_lock_head() l;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'TENANT_UNKNOWN: no such tenant' USING ERRCODE = 'foreign_key_violation';
    END IF;
    -- After the tenant: a login that may not name it learns nothing from its rows' shape.
    IF coalesce(jsonb_typeof(p_rows), 'null') <> 'array' OR jsonb_array_length(p_rows) = 0 THEN
      RAISE EXCEPTION 'AUDIT_ROWS_INVALID: an append is a non-empty array of rows'
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF first_seq IS DISTINCT FROM h.head_seq + 1 OR first_prev IS DISTINCT FROM h.head_hash THEN
      RETURN QUERY SELECT false, h.head_seq, h.head_hash;
      RETURN;
    END IF;
    INSERT INTO public.audit_events (tenant_id, seq, ts, session, agent, kind, source, origin,
        method, decision, reason, module, rule, prev_hash, hash)
      SELECT p_tenant, r.seq, r.ts, r.session, r.agent, r.kind, r.source, r.origin, r.method,
        r.decision, r.reason, r.module, r.rule, r.prev_hash, r.hash
      FROM jsonb_to_recordset(p_rows) AS r(seq bigint, ts text, session text, agent text,
        kind text, source text, origin text, method text, decision text, reason text,
        module text, rule text, prev_hash text, hash text)
      ORDER BY r.seq;
    RETURN QUERY SELECT true, a.head_seq, a.head_hash FROM public.audit_heads a
      WHERE a.tenant_id = p_tenant;
  END $f$;
  REVOKE EXECUTE ON FUNCTION audit_append(text, jsonb) FROM PUBLIC;
  GRANT EXECUTE ON FUNCTION audit_append(text, jsonb) TO omotai_runtime;
`;

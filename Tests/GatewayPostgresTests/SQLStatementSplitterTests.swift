import GatewayCore
@testable import GatewayPostgres
import Testing

@Suite struct SQLStatementSplitterTests {
    @Test func splitsOnTopLevelSemicolonsOnly() {
        let sql = """
            -- a comment; not a split
            CREATE TABLE a (x text DEFAULT 'semi;colon', "we;ird" int);
            /* block; comment /* nested; */ still comment */
            INSERT INTO a VALUES ('it''s; fine');
            CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$ BEGIN PERFORM 1; END; $$;
            CREATE FUNCTION g() RETURNS void LANGUAGE plpgsql AS $body$ BEGIN PERFORM '$$'; END; $body$;
            SELECT $1::int;
            ;;
            """
        let statements = SQLStatementSplitter.split(sql)
        #expect(statements.count == 5)
        #expect(statements[0].hasPrefix("-- a comment; not a split\nCREATE TABLE a"))
        #expect(statements[0].hasSuffix(#""we;ird" int)"#))
        #expect(statements[1].hasSuffix("INSERT INTO a VALUES ('it''s; fine')"))
        #expect(statements[2].hasSuffix("PERFORM 1; END; $$"))
        #expect(statements[3].hasSuffix("PERFORM '$$'; END; $body$"))
        #expect(statements[4] == "SELECT $1::int")
    }

    @Test func aFileWithoutATrailingSemicolonKeepsItsLastStatement() {
        #expect(SQLStatementSplitter.split("SELECT 1; SELECT 2") == ["SELECT 1", "SELECT 2"])
        #expect(SQLStatementSplitter.split("  -- only a comment\n").isEmpty)
    }

    @Test func theCoreMigrationsSplitIntoStatements() {
        for migration in Migration.core {
            let statements = SQLStatementSplitter.split(migration.sql)
            #expect(!statements.isEmpty)
            #expect(statements.allSatisfy { !$0.hasSuffix(";") })
        }
    }
}

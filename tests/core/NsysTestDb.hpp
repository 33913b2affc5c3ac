// Nsight Systems SQLite exports written by the tests and the benchmark: the tables and columns the
// reader uses (an older or newer export may have more, or fewer optional ones), filled row by
// row through prepared statements inside one transaction.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace nsystest {

using Value = std::variant<std::nullptr_t, int64_t, std::string>;

class Db {
public:
    explicit Db(const std::string& path)
    {
        std::remove(path.c_str());
        if (sqlite3_open(path.c_str(), &m_db) != SQLITE_OK) throw std::runtime_error("cannot create " + path);
        Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN");
    }
    ~Db()
    {
        sqlite3_exec(m_db, "COMMIT", nullptr, nullptr, nullptr);
        sqlite3_close(m_db);
    }
    Db(const Db&) = delete;
    Db& operator=(const Db&) = delete;

    void Exec(const std::string& sql)
    {
        char* error = nullptr;
        if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
            std::string what = error ? error : "?";
            sqlite3_free(error);
            throw std::runtime_error(sql + ": " + what);
        }
    }

    // CREATE TABLE name (columns...), every column INTEGER unless it ends in ":TEXT".
    void Table(const std::string& name, std::initializer_list<std::string> columns)
    {
        std::string sql = "CREATE TABLE " + name + " (";
        bool first = true;
        for (std::string c : columns) {
            std::string type = "INTEGER";
            if (c.size() > 5 && c.substr(c.size() - 5) == ":TEXT") type = "TEXT", c.resize(c.size() - 5);
            sql += (first ? "" : ", ") + c + " " + type;
            first = false;
        }
        Exec(sql + ")");
    }

    // One row of `table`, values in the table's column order.
    void Row(const std::string& table, const std::vector<Value>& values)
    {
        sqlite3_stmt*& stmt = Prepared(table, values.size());
        for (size_t i = 0; i < values.size(); ++i) {
            const int c = static_cast<int>(i) + 1;
            if (const auto* n = std::get_if<int64_t>(&values[i])) sqlite3_bind_int64(stmt, c, *n);
            else if (const auto* s = std::get_if<std::string>(&values[i])) sqlite3_bind_text(stmt, c, s->c_str(), -1, SQLITE_TRANSIENT);
            else sqlite3_bind_null(stmt, c);
        }
        if (sqlite3_step(stmt) != SQLITE_DONE) throw std::runtime_error("insert into " + table + ": " + sqlite3_errmsg(m_db));
        sqlite3_reset(stmt);
    }

private:
    sqlite3_stmt*& Prepared(const std::string& table, size_t n)
    {
        for (auto& [name, stmt] : m_statements)
            if (name == table) return stmt;
        std::string sql = "INSERT INTO " + table + " VALUES (";
        for (size_t i = 0; i < n; ++i) sql += i ? ", ?" : "?";
        m_statements.push_back({table, nullptr});
        if (sqlite3_prepare_v2(m_db, (sql + ")").c_str(), -1, &m_statements.back().second, nullptr) != SQLITE_OK)
            throw std::runtime_error(sql + ": " + sqlite3_errmsg(m_db));
        return m_statements.back().second;
    }

public:
    // Finalizes the statements (before the destructor commits).
    void Close()
    {
        for (auto& [name, stmt] : m_statements) sqlite3_finalize(stmt);
        m_statements.clear();
    }

private:
    sqlite3* m_db = nullptr;
    std::vector<std::pair<std::string, sqlite3_stmt*>> m_statements;
};

// nsys's global ids: (pid << 24) | tid.
inline int64_t GlobalTid(int64_t pid, int64_t tid) { return (pid << 24) | tid; }

// The tables of an export as the reader reads them, empty.
inline void CreateExportTables(Db& db)
{
    db.Table("StringIds", {"id", "value:TEXT"});
    db.Table("ThreadNames", {"nameId", "priority", "globalTid"});
    db.Table("TARGET_INFO_GPU", {"id", "name:TEXT", "busLocation:TEXT"});
    db.Table("TARGET_INFO_SESSION_START_TIME", {"utcEpochNs", "utcTime:TEXT"});
    db.Table("CUPTI_ACTIVITY_KIND_KERNEL", {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                            "demangledName", "shortName", "gridX", "greenContextId"});
    db.Table("CUPTI_ACTIVITY_KIND_MEMCPY", {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "bytes",
                                            "copyKind"});
    db.Table("CUPTI_ACTIVITY_KIND_MEMSET", {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "bytes"});
    db.Table("CUPTI_ACTIVITY_KIND_RUNTIME", {"start", "end", "eventClass", "globalTid", "correlationId", "nameId"});
    db.Table("NVTX_EVENTS", {"start", "end", "eventType", "rangeId", "text:TEXT", "globalTid", "textId", "domainId"});
}

} // namespace nsystest

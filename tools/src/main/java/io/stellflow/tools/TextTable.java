package io.stellflow.tools;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * A left-aligned text table: a header row and data rows, each column as wide as its widest cell, two
 * spaces between columns, no trailing spaces (the layout of Kafka's group tool, readable by {@code
 * column -t} and {@code awk}). Not thread-safe.
 */
final class TextTable {
    private final List<String[]> rows = new ArrayList<>();
    private final int columns;

    TextTable(String... header) {
        this.columns = header.length;
        rows.add(header);
    }

    /** Adds a row; null cells print as "-". */
    TextTable row(Object... cells) {
        if (cells.length != columns) {
            throw new IllegalArgumentException("row of " + cells.length + " cells in a table of " + columns);
        }
        String[] r = new String[columns];
        for (int i = 0; i < columns; i++) {
            r[i] = cells[i] == null ? "-" : cells[i].toString();
        }
        rows.add(r);
        return this;
    }

    /** Data rows added so far (the header not counted). */
    int size() {
        return rows.size() - 1;
    }

    void print(PrintWriter out) {
        int[] width = new int[columns];
        for (String[] r : rows) {
            for (int i = 0; i < columns; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] r : rows) {
            sb.setLength(0);
            for (int i = 0; i < columns; i++) {
                sb.append(r[i]);
                if (i < columns - 1) {
                    sb.append(" ".repeat(width[i] - r[i].length() + 2));
                }
            }
            out.println(sb.toString().stripTrailing());
        }
    }
}

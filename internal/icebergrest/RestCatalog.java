// RestCatalog serves Apache Iceberg's own REST catalog (the reference
// implementation the REST spec's test kit uses: RESTCatalogAdapter over a
// JdbcCatalog in a SQLite file) on a loopback port, for tidemark's tests
// of the Iceberg sink with catalog: {rest: ...}. Iceberg's RESTCatalogServer
// listens on every interface; this listens on 127.0.0.1 only, on a port
// the system picks, and prints it as "listening PORT".
//
// Run with Java's source launcher, the iceberg-open-api jar (which bundles
// the server) on the class path:
//   java -cp iceberg-open-api-VERSION.jar RestCatalog.java WAREHOUSE_URI DB_FILE
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

public class RestCatalog {
  public static void main(String[] args) throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put("catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog");
    props.put("uri", "jdbc:sqlite:file:" + args[1]);
    props.put("jdbc.schema-version", "V1");
    props.put("warehouse", args[0]);
    Catalog catalog = CatalogUtil.buildIcebergCatalog("rest_backend", props, new org.apache.hadoop.conf.Configuration());
    ServletContextHandler handler = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    handler.addServlet(new ServletHolder(new RESTCatalogServlet(new RESTCatalogAdapter(catalog))), "/*");
    Server server = new Server(new InetSocketAddress("127.0.0.1", 0));
    server.setHandler(handler);
    server.start();
    System.out.println("listening " + ((ServerConnector) server.getConnectors()[0]).getLocalPort());
    System.out.flush();
    server.join();
  }
}

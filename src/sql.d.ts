/** SQL migration files are bundled as text (wrangler.toml `[[rules]] type = "Text"`). */
declare module "*.sql" {
  const text: string;
  export default text;
}

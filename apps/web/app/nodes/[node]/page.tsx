// Node detail route: /nodes/{node}[?device=<resource>/<id>].
import type { Metadata } from 'next';
import { NodeDetail } from '../../../components/node/node-detail';

interface Props {
  params: Promise<{ node: string }>;
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { node } = await params;
  return { title: `Node ${decodeURIComponent(node)}` };
}

export default async function NodePage({ params }: Props) {
  const { node } = await params;
  return <NodeDetail name={decodeURIComponent(node)} />;
}
